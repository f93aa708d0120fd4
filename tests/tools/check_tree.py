#!/usr/bin/env python3
"""Checks that the tree is what it says (run by ctest, tests/cmake/docs.cmake):

1. Nothing at the repository root but what the project's shape names: a stray file there (six `nsys stats`
   CSVs once sat at the root for months, byte-identical to fixtures) fails, tracked or not (files git
   ignores, such as build/, are not the tree).
2. No empty source, script, build or document file (an empty tests/package/consumer/nvtx_consumer.cpp once
   sat there). Recorded run directories (examples/*/, tests/data/) keep their empty logs and tables: they are
   what the tools wrote.
3. No Markdown link or path leaves the repository (`../shared/...` exists on the developers' machines only).

Usage: check_tree.py SOURCE_DIR
"""
import pathlib
import re
import subprocess
import sys

ROOT_ENTRIES = {
    # The shape (README "Layout"): the build, the library, the CLI, examples, tests, configuration, what is
    # not vendored, the CI entry point; and the folders that serve them.
    'CMakeLists.txt', 'CMakePresets.json', 'README.md', 'libllmprof', 'apps', 'examples', 'tests', 'config',
    'third_party', '.ci', 'bench', 'cmake', 'docs', 'fuzz', 'scripts',
    # Tool settings.
    '.gitignore', '.clang-format', '.clang-tidy',
}
SOURCE_SUFFIXES = {'.cpp', '.hpp', '.h', '.py', '.sh', '.cmake', '.md', '.toml', '.in', '.txt'}
RECORDS = ('examples/', 'tests/data/')
LINK = re.compile(r'\]\(([^)#\s]+)')


def git_files(root, *args):
    out = subprocess.run(['git', '-C', str(root), 'ls-files', '-z', *args], check=True, capture_output=True).stdout
    return [name for name in out.decode().split('\0') if name]


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    tracked = git_files(root)
    untracked = git_files(root, '--others', '--exclude-standard')
    errors = []
    for name in sorted({path.split('/', 1)[0] for path in tracked + untracked}):
        if name not in ROOT_ENTRIES:
            errors.append(f'{name}: not part of the repository root\'s shape (README "Layout"); move it where it '
                          f'belongs, or add it to ROOT_ENTRIES in tests/tools/check_tree.py with the reason')
    for name in tracked:
        path = root / name
        if name.startswith(RECORDS) and not name.endswith(('.cpp', '.hpp', '.py', '.sh', 'CMakeLists.txt')):
            continue
        if (path.suffix in SOURCE_SUFFIXES or path.name == 'CMakeLists.txt') and path.is_file() and \
                path.stat().st_size == 0:
            errors.append(f'{name}: empty file; delete it or give it its content')
    for name in tracked:
        if not name.endswith('.md'):
            continue
        text = (root / name).read_text(errors='replace')
        if '../shared/' in text:
            errors.append(f'{name}: names ../shared/, which users of the repository do not have')
        for target in LINK.findall(text):
            if '://' in target or target.startswith('mailto:'):
                continue
            resolved = ((root / name).parent / target).resolve()
            if root not in resolved.parents and resolved != root:
                errors.append(f'{name}: the link {target} leaves the repository')
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        return 1
    print(f'the root holds only the shape ({len(ROOT_ENTRIES)} names allowed); no empty source file; no link '
          f'leaves the repository')
    return 0


if __name__ == '__main__':
    sys.exit(main())
