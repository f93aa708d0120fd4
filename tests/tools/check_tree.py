#!/usr/bin/env python3
"""Checks that the tree is what it says (run by ctest, tests/cmake/docs.cmake):

1. Nothing at the repository root but what the project's shape names: a stray file there (six `nsys stats`
   CSVs once sat at the root for months, byte-identical to fixtures) fails, tracked or not (files git
   ignores, such as build/, are not the tree).
2. No empty tracked file (an empty tests/package/consumer/nvtx_consumer.cpp once sat there), except the
   recorded outputs in EMPTY_RECORDED: files a tool wrote empty that a test or a re-render reads as they are.
3. No Markdown link or path leaves the repository (`../shared/...` exists on the developers' machines only).
4. examples/ holds at most 255 tracked files: the sources, and the recorded runs the README and docs link to,
   trimmed to what a reader and the tests open (a run's logs stay on the machine that made it).
5. The tracked tree stays under 35 MB, and no tracked file under tests/data or examples exceeds 1 MB: a larger
   recorded fixture is tracked as FILE.gz (cmake/fixtures.cmake unpacks it to FILE when configuring). Each such
   FILE.gz is what `gzip -9n` writes (no name or time in its header, so re-compressing gives the same bytes),
   and its FILE is neither tracked nor left for `git add` to pick up: .gitignore names it.

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
# Empty because the tool wrote them so: `nsys stats` writes an empty CSV for a report with no rows (no GPU
# memory operations; a CUDA-graph capture without node tracing has no per-kernel rows), and a workload that printed
# nothing to stderr leaves an empty stderr.log. Their runs' run.json lists them, and the analysis reads the CSVs as
# nsys left them (an empty table is a table with no rows, not a missing one).
EMPTY_RECORDED = {
    'examples/graphs-h100/cpp-graphs-auto/nsys/summary_cuda_gpu_kern_sum.csv',
    'examples/graphs-h100/cpp-graphs-auto/nsys/summary_nvtx_kern_sum.csv',
    'examples/sample-run-h100/nsys/summary_cuda_gpu_mem_time_sum.csv',
    'tests/data/debian-nsight-2022/nsys/cpu_gated_cudaapisum.csv',
    'tests/data/debian-nsight-2022/nsys/cpu_gated_gpukernsum.csv',
    'tests/data/debian-nsight-2022/nsys/cpu_gated_gpumemtimesum.csv',
    'tests/data/debian-nsight-2022/nsys/cpu_gated_nvtxgpuproj.csv',
    'tests/data/debian-nsight-2022/nsys/cpu_gated_nvtxkernsum.csv',
    'tests/data/h100-1b-decode/nsys/summary_cuda_gpu_mem_time_sum.csv',
    'tests/data/h100-1b-decode/stage1/stderr.log',
    'tests/data/nsys-sqlite-stats/twoproc2022_2022_gpumemtimesum.csv',
}
MAX_EXAMPLE_FILES = 250  # the cap the tree keeps; report.md of speed-h200's runs is rendered from report.json
MAX_TRACKED_BYTES = 35_000_000
# The 1b decode's ncu raw CSV, 2.2 MB, is the size that fixtures reached before they were stored compressed.
MAX_FIXTURE_BYTES = 1_000_000
FIXTURE_ROOTS = ('tests/data/', 'examples/')
LINK = re.compile(r'\]\(([^)#\s]+)')


def git_files(root, *args):
    out = subprocess.run(['git', '-C', str(root), 'ls-files', '-z', *args], check=True, capture_output=True).stdout
    return [name for name in out.decode().split('\0') if name]


def packed_fixture_errors(root, tracked):
    """Errors for the tracked fixtures stored as FILE.gz (rule 5)."""
    errors = []
    packed = [name for name in tracked if name.endswith('.gz') and name.startswith(FIXTURE_ROOTS)]
    tracked_set = set(tracked)
    for name in packed:
        header = (root / name).read_bytes()[:10]
        # RFC 1952: magic 1f 8b, method 8 (deflate), flags (0x08: a file name follows), mtime (4 bytes), extra
        # flags (2: the slowest, best compression, -9).
        if len(header) < 10 or header[:3] != b'\x1f\x8b\x08' or header[3] & 0x08 or header[4:8] != b'\0\0\0\0' \
                or header[8] != 2:
            errors.append(f'{name}: not as `gzip -9n` writes it (a name, a time or another level in its header); '
                          f're-compress the unpacked file with `gzip -9nkf {name[:-3]}` so its bytes are reproducible')
        if name[:-3] in tracked_set:
            errors.append(f'{name[:-3]}: tracked beside {name}; keep only the compressed one (git rm --cached)')
    plain = [name[:-3] for name in packed]
    ignored = subprocess.run(['git', '-C', str(root), 'check-ignore', '--no-index', '--stdin', '-z'],
                             input='\0'.join(plain).encode(), capture_output=True).stdout.decode().split('\0')
    for name in sorted(set(plain) - set(ignored)):
        errors.append(f'{name}: unpacked from {name}.gz when configuring, but .gitignore does not name it; add '
                      f'/{name} to the list of compressed fixtures there')
    return errors, len(packed)


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
        if name not in EMPTY_RECORDED and path.is_file() and path.stat().st_size == 0:
            errors.append(f'{name}: empty file; delete it or give it its content (a recorded output a tool wrote '
                          f'empty goes in EMPTY_RECORDED in tests/tools/check_tree.py, with the reason)')
    examples = [name for name in tracked if name.startswith('examples/')]
    if len(examples) > MAX_EXAMPLE_FILES:
        errors.append(f'examples/ holds {len(examples)} tracked files, more than {MAX_EXAMPLE_FILES}: keep a recorded '
                      f"run's report, run.json and what the tests read; its logs and raw exports stay out")
    sizes = {name: (root / name).stat().st_size for name in tracked if (root / name).is_file()}
    total = sum(sizes.values())
    if total > MAX_TRACKED_BYTES:
        errors.append(f'the tracked tree holds {total} bytes, more than {MAX_TRACKED_BYTES}: find the largest with '
                      f'`git ls-files -z | xargs -0 du -b | sort -n | tail`, then compress or trim what it is')
    for name, size in sizes.items():
        if name.startswith(FIXTURE_ROOTS) and not name.endswith('.gz') and size > MAX_FIXTURE_BYTES:
            errors.append(f'{name}: {size} bytes, more than {MAX_FIXTURE_BYTES}; track it as {name}.gz '
                          f'(`gzip -9n`, then name {name} in .gitignore: cmake/fixtures.cmake unpacks it)')
    packed_errors, packed_count = packed_fixture_errors(root, tracked)
    errors += packed_errors
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
    print(f'the root holds only the shape ({len(ROOT_ENTRIES)} names allowed); no empty file but '
          f'{len(EMPTY_RECORDED)} recorded outputs; no link leaves the repository; examples/ holds {len(examples)} '
          f'files; {total} tracked bytes, {packed_count} fixtures stored as gzip -9n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
