#!/usr/bin/env python3
"""Fails (exit 1) when a comment in ROOT/libllmprof/ or ROOT/apps/ cites an issue or carries a date.

A comment says why, citing the measurement or the tool version behind a line; the issue that asked for it and
the day it was measured belong in the commit message or docs/ (docs/style.md). Checked:
- an issue number: "issue 48", "Issues #3", "#48" (the rule of the developers' before-stop hook, applied to every
  line as the hook does, strings included; "#48" in comments only);
- a date in a comment: 2026-11-23, 2026-11, "Nov 23, 2026", "November 2026".
A run id used as an example of the format ("20261122T153122Z-a1b2c3") and a date inside a path
(examples/nsight-2025-h100/ncu-cost-2026-11-23/) are not dates here: they name a thing that exists.
Comments are `//` and `/* */` in C++ sources, `#` in CMake, Python and shell files.

Usage: check_comments.py ROOT
"""
import pathlib
import re
import sys

ISSUE_ANYWHERE = re.compile(r'[Ii]ssues? ?#?[0-9]{1,3}\b')  # the before-stop hook's rule
ISSUE_IN_COMMENT = re.compile(r'(?<![\w&/])#[0-9]{1,4}\b')
MONTH = r'(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?'
DATE_IN_COMMENT = re.compile(r'(?<![-/\w])(?:19|20)[0-9]{2}-[01][0-9](?:-[0-3][0-9])?(?![-/\w])|'
                             rf'\b{MONTH} (?:[0-3]?[0-9],? )?(?:19|20)[0-9]{{2}}\b|'
                             rf'\b[0-3]?[0-9] {MONTH} (?:19|20)[0-9]{{2}}\b')
CPP_SUFFIXES = {'.cpp', '.hpp', '.h', '.cc', '.in'}
HASH_SUFFIXES = {'.cmake', '.py', '.sh', '.txt'}
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)\'')


def cpp_comments(text):
    """(line number, comment text) of every // and /* */ comment, string literals skipped."""
    comments, in_block = [], False
    for number, line in enumerate(text.splitlines(), 1):
        code = line
        if in_block:
            end = code.find('*/')
            comments.append((number, code if end == -1 else code[:end]))
            if end == -1:
                continue
            code, in_block = code[end + 2:], False
        code = STRING.sub('""', code)
        while True:
            line_at, block_at = code.find('//'), code.find('/*')
            if line_at == -1 and block_at == -1:
                break
            if block_at == -1 or (line_at != -1 and line_at < block_at):
                comments.append((number, code[line_at + 2:]))
                break
            end = code.find('*/', block_at + 2)
            if end == -1:
                comments.append((number, code[block_at + 2:]))
                in_block = True
                break
            comments.append((number, code[block_at + 2:end]))
            code = code[end + 2:]
    return comments


def hash_comments(text):
    comments = []
    for number, line in enumerate(text.splitlines(), 1):
        code = STRING.sub('""', line)
        if '#' in code and not code.lstrip().startswith('#!'):
            comments.append((number, code[code.index('#') + 1:]))
    return comments


def main():
    root = pathlib.Path(sys.argv[1])
    errors, files = [], 0
    for top in ('libllmprof', 'apps'):
        for path in sorted((root / top).rglob('*')):
            if not path.is_file() or not (path.suffix in CPP_SUFFIXES | HASH_SUFFIXES or path.name == 'CMakeLists.txt'):
                continue
            files += 1
            text = path.read_text(errors='replace')
            where = path.relative_to(root)
            for number, line in enumerate(text.splitlines(), 1):
                if match := ISSUE_ANYWHERE.search(line):
                    errors.append(f'{where}:{number}: cites an issue ("{match.group(0)}"); say why in the comment '
                                  f'itself, with the measurement or tool version behind it')
            hash_style = path.suffix in HASH_SUFFIXES or path.name == 'CMakeLists.txt'
            for number, comment in (hash_comments(text) if hash_style else cpp_comments(text)):
                if match := ISSUE_IN_COMMENT.search(comment):
                    errors.append(f'{where}:{number}: a comment cites an issue ("{match.group(0)}"); say why instead')
                if match := DATE_IN_COMMENT.search(comment):
                    errors.append(f'{where}:{number}: a comment carries a date ("{match.group(0)}"); name the tool '
                                  f'version or the run measured instead, and put the date in the commit message')
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        return 1
    print(f'no issue number or date in the comments of {files} files under libllmprof/ and apps/')
    return 0


if __name__ == '__main__':
    sys.exit(main())
