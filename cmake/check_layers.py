#!/usr/bin/env python3
"""Fails (exit 1) when a file of the library includes a header of a layer it may not use.

Usage: check_layers.py LIBRARY_DIR [STAMP]. The layers and their allowed dependencies are in
LIBRARY_DIR/layers.txt; sources live in LIBRARY_DIR/src/<layer>/, the headers shared across layers in
LIBRARY_DIR/include/llmprof/ (the API, installed) and LIBRARY_DIR/internal/llmprof/ (not installed), each
assigned a layer there. nvtx.hpp is the header-only workload API and belongs to no layer. An installed
header may include only installed headers: one that includes an internal header breaks every consumer. On success STAMP (if given) is touched so the build runs this only on change.

It also fails when a function a public header declares is defined in another layer's sources (say,
declared in report.hpp and defined in src/core/format.cpp): the header's layer is where a reader looks
for it, and the definition's layer may not even be allowed to include that header. Namespace-scope
declarations and definitions are found by text (clang-format puts them at column 0); a name that the
defining layer declares itself (an overload such as to_string), one that public headers of several layers
declare (an overload set such as choice_names, one overload per enum), or one defined in an anonymous
namespace is not a violation.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A namespace-scope function declaration or definition: at column 0, a return type, then name(.
FUNCTION = re.compile(r'^(?!(?:return|using|typedef|namespace|class|struct|enum|template|static_assert|if|for|while)\b)'
                      r'[A-Za-z_][\w:<>,\s\*&]*?[\s\*&]((?:\w+::)*\w+)\s*\(')


def function_names(path, definitions):
    """Names of the namespace-scope functions `path` declares (definitions=False) or defines outside an
    anonymous namespace (definitions=True)."""
    names, anonymous = set(), False
    for line in path.read_text().splitlines():
        if line.startswith('namespace {'):
            anonymous = True
        elif line.startswith('}  // namespace') and anonymous:
            anonymous = False
        match = FUNCTION.match(line)
        if not match or 'operator' in match.group(1):
            continue
        name = match.group(1).removeprefix('llmprof::').removeprefix('detail::')
        if '::' in name:  # a member function of a class
            continue
        is_definition = not line.rstrip().endswith(';')
        if definitions and is_definition and not anonymous:
            names.add(name)
        elif not definitions:
            names.add(name)
    return names


def read_layers(path):
    allowed, public = {}, {}
    for raw in path.read_text().splitlines():
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        head, _, rest = line.partition(':')
        if head.startswith('public '):
            for name in rest.split():
                public[name] = head.split()[1]
        else:
            allowed[head.strip()] = set(rest.split()) | {head.strip()}
    return allowed, public


def layer_of_include(target, public, layers):
    if target.startswith('llmprof/'):
        stem = target[len('llmprof/'):].removesuffix('.hpp')
        return 'nvtx' if stem in ('nvtx', 'export') else public.get(stem, '?' + stem)
    first = target.split('/', 1)[0]
    return first if first in layers and '/' in target else None


def shared_headers(root):
    """The headers under include/llmprof/ (installed) and internal/llmprof/ (not installed)."""
    return sorted((root / 'include' / 'llmprof').glob('*.hpp')) + sorted((root / 'internal' / 'llmprof').glob('*.hpp'))


def misplaced_definitions(root, public):
    """Public functions defined in the sources of a layer other than their header's."""
    declared_publicly, declared_in_layer = {}, {}
    for header in shared_headers(root):
        layer = public.get(header.stem)
        if layer is None:
            continue
        for name in function_names(header, definitions=False):
            declared_publicly.setdefault(name, set()).add((layer, header.name))
            declared_in_layer.setdefault(layer, set()).add(name)
    for header in (root / 'src').glob('*/*.hpp'):
        declared_in_layer.setdefault(header.parent.name, set()).update(function_names(header, definitions=False))
    errors = []
    for source in sorted((root / 'src').glob('*/*.cpp')):
        layer = source.parent.name
        for name in sorted(function_names(source, definitions=True)):
            if name not in declared_publicly or name in declared_in_layer.get(layer, set()):
                continue
            # Public headers of several layers declare overloads of it (choice_names, to_string): an
            # overload set told apart by parameter types, which this text match cannot see.
            if len({home for home, _ in declared_publicly[name]}) > 1:
                continue
            homes = sorted(declared_publicly[name])
            where = ', '.join(f'{header} (layer "{home}")' for home, header in homes)
            errors.append(f'{source}: defines {name}(), declared in {where}; define it in that layer\'s '
                          f'src/ folder, or declare it in a public header of layer "{layer}"')
    return errors


def main():
    root = pathlib.Path(sys.argv[1])
    allowed, public = read_layers(root / 'layers.txt')
    errors = []
    files = [(p, p.parent.name) for p in (root / 'src').glob('*/*.[ch]pp')]
    installed = {header.name for header in (root / 'include' / 'llmprof').glob('*.hpp')}
    for header in shared_headers(root):
        stem = header.stem
        if header.parent.parent.name == 'include':
            for number, line in enumerate(header.read_text().splitlines(), 1):
                match = INCLUDE.match(line)
                if match and match.group(1).startswith('llmprof/') and \
                        match.group(1)[len('llmprof/'):] not in installed:
                    errors.append(f'{header}:{number}: the installed header includes "{match.group(1)}", which '
                                  f'is internal (internal/llmprof/, not installed); move it to include/llmprof/ '
                                  f'(the API) or stop including it here')
        if stem in ('nvtx', 'export'):
            continue
        if stem not in public:
            errors.append(f'{header}: public header has no layer in layers.txt; add it to a "public <layer>:" line')
            continue
        files.append((header, public[stem]))
    for path, layer in files:
        if layer not in allowed:
            errors.append(f'{path}: folder "{layer}" is not a layer in layers.txt')
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target_layer = layer_of_include(match.group(1), public, allowed)
            if target_layer is None or target_layer == 'nvtx':
                continue
            if target_layer.startswith('?'):
                errors.append(f'{path}:{number}: includes unknown public header "{match.group(1)}"')
            elif target_layer not in allowed[layer]:
                errors.append(f'{path}:{number}: layer "{layer}" includes "{match.group(1)}" of layer '
                              f'"{target_layer}"; "{layer}" may use only: {" ".join(sorted(allowed[layer]))}')
    errors += misplaced_definitions(root, public)
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        print(f'check_layers: {len(errors)} layering violation(s); see {root / "layers.txt"}', file=sys.stderr)
        return 1
    if len(sys.argv) > 2:
        pathlib.Path(sys.argv[2]).touch()
    return 0


if __name__ == '__main__':
    sys.exit(main())
