#!/usr/bin/env python3
"""Checks that the docs say what the tree is (run by ctest, tests/cmake/docs.cmake):

1. docs/architecture.md's layer edges, between the markers `<!-- layers.txt edges -->` and
   `<!-- end of layers.txt edges -->`, are exactly libllmprof/layers.txt's (one line per layer:
   "layer → the layers it may include"). `check_docs.py --write` regenerates that block.
2. The README's header tables name exactly the headers of libllmprof/include/llmprof/ (the installed API, rows
   starting "| `") and of libllmprof/internal/llmprof/ (rows starting "| internal: `").
3. Every `*.hpp`/`*.cpp` path under libllmprof/ that docs/architecture.md's "Where to find" table names
   exists (rows marked TBD are skipped: their files are being created).
4. Every status in the README's "### Exit codes" table is asserted of a finished deep-profile somewhere under
   tests/ (`exit_code == N`, `WEXITSTATUS(status) == N`, `exit_code_for(...) == N`), so a documented code
   without a test shows here.
5. The README's library snippet (between `<!-- harness excerpt` and `<!-- end of harness excerpt -->`) is
   code of examples/harness/harness.cpp: each of its lines is a line of that file (leading spaces aside), in
   the file's order, so the snippet is compiled and run wherever the harness is (the package test).

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


EXIT_ASSERTION = re.compile(r'(?:exit_code(?:_for\([^;]*?\))?|WEXITSTATUS\(\w+\))\s*==\s*(\d+)\b')


def check_exit_codes(root):
    readme = (root / 'README.md').read_text()
    if '### Exit codes' not in readme:
        return ['README.md: no "### Exit codes" table']
    table = readme.split('### Exit codes', 1)[1].split('\n#', 1)[0]
    documented = {int(code) for code in re.findall(r'^\| (\d+) \|', table, re.MULTILINE)}
    asserted = set()
    for source in (root / 'tests').rglob('*.cpp'):
        text = source.read_text(errors='replace')
        if 'deep_profile' not in text and 'deep-profile' not in text and 'exit_code_for' not in text:
            continue  # only tests that run deep-profile (or its status mapping), not a fake tool's own exits
        asserted.update(int(code) for code in EXIT_ASSERTION.findall(text))
    errors = [f'README.md: exit code {code} is documented but no test of deep-profile under tests/ asserts it'
              for code in sorted(documented - asserted)]
    return errors


def check_harness_excerpt(root):
    readme = (root / 'README.md').read_text()
    if '<!-- harness excerpt' not in readme or '<!-- end of harness excerpt -->' not in readme:
        return ['README.md: no "<!-- harness excerpt" ... "<!-- end of harness excerpt -->" block']
    block = readme.split('<!-- harness excerpt', 1)[1].split('<!-- end of harness excerpt -->', 1)[0]
    code = block.split('```cpp', 1)[1].split('```', 1)[0] if '```cpp' in block else ''
    wanted = [line.strip() for line in code.splitlines() if line.strip()]
    if not wanted:
        return ['README.md: the harness excerpt has no ```cpp block']
    source = [line.strip() for line in (root / 'examples' / 'harness' / 'harness.cpp').read_text().splitlines()]
    errors, at = [], 0
    for line in wanted:
        try:
            at = source.index(line, at) + 1
        except ValueError:
            errors.append(f'README.md: the harness excerpt line "{line}" is not in examples/harness/harness.cpp '
                          f'(after the excerpt\'s previous line)')
    return errors


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
    # Two tables: the installed API (rows "| `x.hpp`") and the internal headers (rows "| internal: `x.hpp`").
    for kind, folder, prefix in (('public', 'include', '| `'), ('internal', 'internal', '| internal: `')):
        headers = {p.name for p in (root / 'libllmprof' / folder / 'llmprof').glob('*.hpp')}
        named = set()
        for line in (root / 'README.md').read_text().splitlines():
            if line.startswith(prefix) and '.hpp' in line.split('|')[1]:
                named.update(re.findall(r'`([\w/]+\.hpp)`', line.split('|')[1]))
        for header in sorted(named - headers):
            errors.append(f'README.md: the {kind} header table names {header}, which is not in '
                          f'libllmprof/{folder}/llmprof/')
        for header in sorted(headers - named):
            errors.append(f'README.md: the {kind} header table does not list {header} (libllmprof/{folder}/llmprof/)')
    where = text.split('## Where to find', 1)[1] if '## Where to find' in text else ''
    for line in where.splitlines():
        if not line.startswith('|') or 'TBD' in line:
            continue
        for path in re.findall(r'`((?:include|internal|src)/[\w/]+\.[ch]pp)`', line):
            if not (root / 'libllmprof' / path).exists():
                errors.append(f'{architecture}: "Where to find" names libllmprof/{path}, which does not exist')
    errors.extend(check_exit_codes(root))
    errors.extend(check_harness_excerpt(root))
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        return 1
    print('docs agree with layers.txt, the public headers and the source tree')
    return 0


if __name__ == '__main__':
    sys.exit(main())
