#!/usr/bin/env python3
"""Checks the library's surface against what the repository records (run by ctest, tests/cmake/abi.cmake):

1. The names libllmprof.so exports (`nm -D --defined-only`, demangled) are exactly those of
   libllmprof/abi/exported-symbols.txt: a function that lost its LLMPROF_API, or an internal one that gained it,
   fails here with the names that differ. After a deliberate change to the API, re-record the list with
   `cmake --build --preset dev --target llmprof-exported-symbols` and commit it with the change (docs/library.md
   "ABI" says when the version must change too).
2. The installed API stays small: at most 30 headers in libllmprof/include/llmprof/, and deep_profiler.hpp reaches
   at most 12 of them (a harness that runs the pipeline compiles no parser, plan or analysis header).

Usage: check_abi.py SOURCE_DIR LIBRARY [--update]
"""
import pathlib
import re
import subprocess
import sys

MAX_INSTALLED_HEADERS = 30
MAX_DEEP_PROFILER_REACH = 12
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]llmprof/([\w.]+)[>"]', re.M)


def exported_names(library):
    out = subprocess.run(['nm', '-D', '--defined-only', '--demangle', str(library)], check=True,
                         capture_output=True, text=True).stdout
    # "0000000000012345 T llmprof::to_string(llmprof::Stage)": the name is everything after the type letter.
    return sorted({line.split(' ', 2)[2] for line in out.splitlines() if line.count(' ') >= 2})


def reach(include_dir, header, seen=None):
    seen = set() if seen is None else seen
    for name in INCLUDE.findall((include_dir / header).read_text()):
        if name not in seen:
            seen.add(name)
            reach(include_dir, name, seen)
    return seen


def main():
    source, library = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    recorded_file = source / 'libllmprof' / 'abi' / 'exported-symbols.txt'
    names = exported_names(library)
    if '--update' in sys.argv:
        recorded_file.write_text('\n'.join(names) + '\n')
        print(f'recorded {len(names)} exported names in {recorded_file}')
        return 0
    errors = []
    recorded = [line for line in recorded_file.read_text().splitlines() if line]
    added, removed = sorted(set(names) - set(recorded)), sorted(set(recorded) - set(names))
    for name in added:
        errors.append(f'exported but not recorded: {name}')
    for name in removed:
        errors.append(f'recorded but no longer exported: {name}')
    if added or removed:
        errors.append(f'{library.name} exports {len(names)} names, {recorded_file} records {len(recorded)}: mark or '
                      f'unmark LLMPROF_API (llmprof/export.hpp), or after a deliberate API change run `cmake --build '
                      f'--preset dev --target llmprof-exported-symbols` and commit the list')
    foreign = [name for name in names if 'llmprof::' not in name]
    if foreign:
        errors.append(f'{len(foreign)} exported names are not llmprof\'s (libllmprof/abi/exported_symbols.map should '
                      f'keep them local), e.g. {foreign[0]}')
    include_dir = source / 'libllmprof' / 'include' / 'llmprof'
    installed = sorted(path.name for path in include_dir.glob('*.hpp'))
    if len(installed) > MAX_INSTALLED_HEADERS:
        errors.append(f'{len(installed)} installed headers in {include_dir}, more than {MAX_INSTALLED_HEADERS}: a header '
                      f'a harness does not use belongs in libllmprof/internal/llmprof/')
    deep_profiler = sorted(reach(include_dir, 'deep_profiler.hpp'))
    if len(deep_profiler) > MAX_DEEP_PROFILER_REACH:
        errors.append(f'deep_profiler.hpp reaches {len(deep_profiler)} library headers, more than '
                      f'{MAX_DEEP_PROFILER_REACH}: {", ".join(deep_profiler)}')
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        return 1
    print(f'{library.name} exports the {len(names)} recorded names, all llmprof\'s; {len(installed)} installed headers; '
          f'deep_profiler.hpp reaches {len(deep_profiler)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
