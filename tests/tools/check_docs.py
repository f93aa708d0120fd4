#!/usr/bin/env python3
"""Checks that the docs say what the tree is (run by ctest, tests/cmake/docs.cmake):

1. docs/architecture.md's layer edges, between the markers `<!-- layers.txt edges -->` and
   `<!-- end of layers.txt edges -->`, are exactly libllmprof/layers.txt's (one line per layer:
   "layer → the layers it may include"). `check_docs.py --write` regenerates that block.
2. The README's header table (rows starting "| `") names only headers that exist in
   libllmprof/include/llmprof/, and every public header there is named.
3. Every `*.hpp`/`*.cpp` path under libllmprof/ that docs/architecture.md's "Where to find" table names
   exists (rows marked TBD are skipped: their files are being created).

Usage: check_docs.py SOURCE_DIR [--write]
"""
import pathlib
import re
import sys

BEGIN, END = '<!-- layers.txt edges -->', '<!-- end of layers.txt edges -->'


def edges_block(layers_txt):
    lines = []
    for raw in layers_txt.read_text().splitlines():
        line = raw.split('#', 1)[0].strip()
        if not line or line.startswith('public '):
            continue
        layer, _, rest = line.partition(':')
        lines.append(f'{layer.strip():<9}→ {" ".join(rest.split()) or "(nothing)"}')
    return '```\n' + '\n'.join(lines) + '\n```'


def main():
    root = pathlib.Path(sys.argv[1])
    errors = []
    architecture = root / 'docs' / 'architecture.md'
    text = architecture.read_text()
    if BEGIN not in text or END not in text:
        errors.append(f'{architecture}: no "{BEGIN}" ... "{END}" block')
    else:
        head, rest = text.split(BEGIN, 1)
        current, tail = rest.split(END, 1)
        wanted = edges_block(root / 'libllmprof' / 'layers.txt')
        if current.strip() != wanted:
            if '--write' in sys.argv:
                architecture.write_text(f'{head}{BEGIN}\n{wanted}\n{END}{tail}')
            else:
                errors.append(f'{architecture}: the layer edges differ from libllmprof/layers.txt; '
                              f'run `python3 tests/tools/check_docs.py . --write`\nwanted:\n{wanted}\n'
                              f'found:\n{current.strip()}')
    public = {p.name for p in (root / 'libllmprof' / 'include' / 'llmprof').glob('*.hpp')}
    named = set()
    for line in (root / 'README.md').read_text().splitlines():
        if line.startswith('| `') and '.hpp' in line.split('|')[1]:
            named.update(re.findall(r'`([\w/]+\.hpp)`', line.split('|')[1]))
    for header in sorted(named - public):
        errors.append(f'README.md: the header table names {header}, which is not in libllmprof/include/llmprof/')
    for header in sorted(public - named):
        errors.append(f'README.md: the header table does not list the public header {header}')
    where = text.split('## Where to find', 1)[1] if '## Where to find' in text else ''
    for line in where.splitlines():
        if not line.startswith('|') or 'TBD' in line:
            continue
        for path in re.findall(r'`((?:include|src)/[\w/]+\.[ch]pp)`', line):
            if not (root / 'libllmprof' / path).exists():
                errors.append(f'{architecture}: "Where to find" names libllmprof/{path}, which does not exist')
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        return 1
    print('docs agree with layers.txt, the public headers and the source tree')
    return 0


if __name__ == '__main__':
    sys.exit(main())
