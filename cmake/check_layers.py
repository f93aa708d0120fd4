#!/usr/bin/env python3
"""Fails (exit 1) when a file of the library includes a header of a layer it may not use.

Usage: check_layers.py LIBRARY_DIR [STAMP]. The layers and their allowed dependencies are in
LIBRARY_DIR/layers.txt; sources live in LIBRARY_DIR/src/<layer>/, public headers in
LIBRARY_DIR/include/llmprof/ (each assigned a layer there). nvtx.hpp is the header-only workload API
and belongs to no layer. On success STAMP (if given) is touched so the build runs this only on change.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


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
        return 'nvtx' if stem == 'nvtx' else public.get(stem, '?' + stem)
    first = target.split('/', 1)[0]
    return first if first in layers and '/' in target else None


def main():
    root = pathlib.Path(sys.argv[1])
    allowed, public = read_layers(root / 'layers.txt')
    errors = []
    files = [(p, p.parent.name) for p in (root / 'src').glob('*/*.[ch]pp')]
    for header in (root / 'include' / 'llmprof').glob('*.hpp'):
        stem = header.stem
        if stem == 'nvtx':
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
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        print(f'check_layers: {len(errors)} layering violation(s); see {root / "layers.txt"}', file=sys.stderr)
        return 1
    if len(sys.argv) > 2:
        pathlib.Path(sys.argv[2]).touch()
    return 0


if __name__ == '__main__':
    sys.exit(main())
