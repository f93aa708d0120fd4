#!/usr/bin/env python3
"""Fails (exit 1) when a helper that has one home in libllmprof/src/core gets a second one.

Usage: check_one_home.py SOURCE_DIR [STAMP]. Looks at libllmprof/src, libllmprof/include, libllmprof/internal, apps and
tests/support under SOURCE_DIR (not at tests/data, which holds deliberately bad fixtures). The homes:

  whole-file reads      core/file_text.cpp (read_file_text): no other `.rdbuf()`
  trimming, blank tests core/text.hpp (trim, is_blank, kWhitespace): no other definition of a function
                        named trim/is_blank, no find_first_not_of/find_last_not_of over a literal set of
                        whitespace (" \\t", ' ', " \\r\\t", ...): each set was a different idea of "blank"
  percentages           core/format.cpp (format_fraction_percent, llmprof/percent.hpp): no printf "%%"
                        format elsewhere, no function named *percent* that does not call the home

A line may opt out with the comment `one-home: <why>` when it only looks like a second home (e.g. an
indentation count with find_first_not_of(' ')). Pure text matching, deliberately simple: it stops the
common way a copy comes back, not every way. On success STAMP (if given) is touched.
"""
import pathlib
import re
import sys

HOMES = {
    'rdbuf': {'libllmprof/src/core/file_text.cpp'},
    'trim': {'libllmprof/src/core/text.hpp'},
    'percent': {'libllmprof/src/core/format.cpp', 'libllmprof/src/core/format.hpp',
                'libllmprof/internal/llmprof/percent.hpp'},
}
RDBUF = re.compile(r'\.rdbuf\(\)')
TRIM_DEFINITION = re.compile(r'^\s*(?:inline\s+|static\s+|constexpr\s+)*[\w:<>]+\s+(\w*trim\w*|is_blank)\s*\([^;]*$')
WHITESPACE_SET = re.compile(r'find_(?:first|last)_not_of\(\s*(?:\'[ \\trnvf]+\'|"(?:[ ]|\\[trnvf])+")')
PRINTF_PERCENT = re.compile(r'"[^"]*%%[^"]*"')
PERCENT_DEFINITION = re.compile(r'^\s*(?:static\s+|inline\s+)*std::string\s+(\w*percent\w*)\s*\([^;]*$')
OPT_OUT = 'one-home:'


def code_part(line):
    """The line without a trailing // comment (string literals holding // are rare enough here)."""
    at = line.find('//')
    return line if at < 0 else line[:at]


def check_file(path, relative, errors):
    lines = path.read_text(errors='replace').splitlines()
    for number, raw in enumerate(lines, 1):
        if OPT_OUT in raw:
            continue
        line = code_part(raw)
        where = f'{relative}:{number}'
        if RDBUF.search(line) and relative not in HOMES['rdbuf']:
            errors.append(f'{where}: reads a whole file with rdbuf(); use detail::read_file_text '
                          '(core/file_text.hpp)')
        if relative not in HOMES['trim']:
            match = TRIM_DEFINITION.match(line)
            if match:
                errors.append(f'{where}: defines {match.group(1)}(); use detail::trim / detail::is_blank '
                              '(core/text.hpp)')
            if WHITESPACE_SET.search(line):
                errors.append(f'{where}: trims or tests for blank with its own whitespace set; use '
                              'detail::trim / detail::is_blank (core/text.hpp)')
        if relative not in HOMES['percent']:
            if PRINTF_PERCENT.search(line):
                errors.append(f'{where}: formats a percentage with printf "%%"; use format_fraction_percent '
                              '(llmprof/percent.hpp)')
            match = PERCENT_DEFINITION.match(line)
            if match:
                body = '\n'.join(lines[number - 1:number + 4])
                if 'format_fraction_percent' not in body:
                    errors.append(f'{where}: defines {match.group(1)}() without calling format_fraction_percent '
                                  '(llmprof/percent.hpp), the one percent formatter')


def main():
    root = pathlib.Path(sys.argv[1])
    errors = []
    for folder in ('libllmprof/src', 'libllmprof/include', 'libllmprof/internal', 'apps', 'tests/support'):
        for path in sorted((root / folder).rglob('*')):
            if path.suffix in ('.cpp', '.hpp') and path.is_file():
                check_file(path, path.relative_to(root).as_posix(), errors)
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        print(f'check_one_home: {len(errors)} second home(s); see cmake/check_one_home.py for the homes',
              file=sys.stderr)
        return 1
    if len(sys.argv) > 2:
        pathlib.Path(sys.argv[2]).touch()
    return 0


if __name__ == '__main__':
    sys.exit(main())
