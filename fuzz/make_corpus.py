#!/usr/bin/env python3
"""Builds the seed corpora fuzz/corpus/<target>/ from the real fixtures: what is cut out of them.

Seeds are small slices of tests/data/h100-nsight-2025.3 and tests/data/nsys-sqlite (each < 64 KB): the first
rows and first columns of the wide ncu raw pages, the NVTX cells, unit strings and kernel names, the first
activity rows of the large SQLite exports. Whole fixture files are not copied here: fuzz/fixture-seeds.txt
names them and fuzz/run-fuzzers.sh passes them to the targets where they are kept. fuzz/corpus/config/ is not
written here (its one seed is an earlier config/deep-profile.toml; config/ itself is a seed directory).
Re-run after the fixtures change:  python3 fuzz/make_corpus.py
"""
import csv
import io
import pathlib
import shutil
import sqlite3
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "h100-nsight-2025.3"
CORPUS = ROOT / "fuzz" / "corpus"
LIMIT = 60 * 1024
# The directories this script writes, emptied first; the others under fuzz/corpus/ are kept as they are.
GENERATED = ["csv_reader", "ncu_csv", "ncu_diagnosis", "ncu_nvtx_stack", "ncu_units", "kernel_name", "step_tokens",
             "nsys_sqlite", "gpu_metrics"]


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    assert len(data) < 64 * 1024, (target, name, len(data))
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(data)


def head_lines(path, count):
    """The first `count` physical lines, verbatim (keeps CRLF/LF, preamble lines)."""
    with open(path, "rb") as f:
        return b"".join(f.readline() for _ in range(count))


def raw_slice(path, rows, columns):
    """Header + units row + `rows` launches, cut to the first `columns` columns, quoted like ncu."""
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for record in table[: 2 + rows]:
        writer.writerow(record[:columns])
    return out.getvalue()


def raw_slice_columns(path, wanted):
    """Identity columns plus the columns whose name starts with one of `wanted`."""
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    keep = [i for i, name in enumerate(table[0]) if i < 13 or name.startswith(tuple(wanted))]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for record in table[:4]:
        writer.writerow([record[i] for i in keep])
    return out.getvalue()


def sqlite_slice(path, activity_rows):
    """The nsys SQLite export `path` with only its first `activity_rows` rows (by start) of each CUDA
    activity and API table and the NVTX ranges that start before the last API call kept, vacuumed: the
    same schema in a file small enough to fuzz; the ranges still open keep their GPU work only in part."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = pathlib.Path(scratch) / path.name
        shutil.copyfile(path, copy)
        db = sqlite3.connect(copy)
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            if table.startswith("CUPTI_ACTIVITY_KIND_"):
                db.execute(f"DELETE FROM {table} WHERE rowid NOT IN "
                           f"(SELECT rowid FROM {table} ORDER BY start LIMIT {activity_rows})")
        (cutoff,) = db.execute("SELECT max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
        db.execute("DELETE FROM NVTX_EVENTS WHERE start > ?", (cutoff,))
        db.commit()
        db.execute("VACUUM")
        db.close()
        return copy.read_bytes()


def gpu_metrics_program(rows, bad=(), second_type=False, renamed=False):
    """An input of fuzz/gpu_metrics_fuzzer.cpp: 20 kHz asked, one GPU, the four metrics read (or under another unit),
    `rows` sample times of the four at a steady 50 us, the values of `bad` row indices at -1, every other row under
    typeId 1 when `second_type`; then 16 overlapping instances of a stage over the samples."""
    out = bytearray([1, 1, 3])  # 20 kHz asked; one GPU listed; 1 + 3 % 6 = 4 metrics
    out += bytes([4, 5, 6, 7] if renamed else [0, 1, 2, 3])
    for row in range(rows):
        for metric in range(4):
            # The control byte: bit 7 a 16-bit time step (0: the same time) instead of 50 us, bit 5 the typeId,
            # bits 0-2 the value's kind (0: an integer byte, 1: a signed 16-bit integer).
            control = (0x20 if second_type and row % 2 else 0) | (1 if row in bad else 0)
            step = bytes([0]) if metric == 0 else bytes([0, 0])
            value = bytes([0xFF, 0xFF]) if row in bad else bytes([(row * 7 + metric * 13) % 101])
            out += bytes([control | (0 if metric == 0 else 0x80)]) + step + bytes([metric]) + value
    out += bytes([1])  # CPU windows
    for i in range(16):
        out += bytes([i % 2, 0, i * 4, 40])  # thread, start (16-bit, x 1 us), length (x 10 us)
    return bytes(out)


def main():
    for target in GENERATED:
        if (CORPUS / target).exists():
            shutil.rmtree(CORPUS / target)
    ncu = DATA / "ncu"

    write("ncu_csv", "nc1_details_head.csv", head_lines(ncu / "nc1_details.csv", 120))
    write("ncu_csv", "nc2_log_head.csv", head_lines(ncu / "nc2_log.csv", 120))
    write("ncu_csv", "nc1_raw_slice.csv", raw_slice(ncu / "nc1_raw.csv", 3, 60))
    write("ncu_csv", "nc1_raw_base_slice.csv", raw_slice(ncu / "nc1_raw_base.csv", 3, 60))
    write("ncu_csv", "gemm_raw_flop.csv",
          raw_slice_columns(ncu / "gemm_raw.csv", ["gpu__time_duration", "sm__ops_path_tensor_src_bf16", "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__sass_thread_inst_executed_op_ffma"]))
    write("ncu_csv", "nc1_raw_flop.csv",
          raw_slice_columns(ncu / "nc1_raw.csv", ["gpu__time_duration", "sm__ops_path_tensor_src_fp16", "dram__bytes_read.sum", "sm__cycles_elapsed.avg.per_second"]))

    write("csv_reader", "nc1_raw_slice.csv", raw_slice(ncu / "nc1_raw.csv", 2, 40))
    write("csv_reader", "nc2_log_head.csv", head_lines(ncu / "nc2_log.csv", 30))
    write("csv_reader", "crlf_quotes.csv",
          b'==PROF== x\r\n"ID","Name","Value"\r\n"1","void f<int, 2>(""a,b"")","1,712,814,376,811,594.25"\r\n'
          b'"2","multi\nline","n/a"\r\n"3","","-1.5e+03"')

    with open(ncu / "nc1_raw.csv", newline="") as f:
        table = list(csv.reader(f))
    nvtx_column = table[0].index("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg")
    cells = sorted({record[nvtx_column] for record in table[2:]})
    for i, cell in enumerate(cells):
        write("ncu_nvtx_stack", f"nc1_raw_{i}.txt", cell)
    write("ncu_nvtx_stack", "domain_and_colon.txt",
          '7  "llm:generate:none:none:none:none:none:none" "llm:attn:qk:none:none:none:none:none:none" ')

    units = set(table[1])
    with open(ncu / "nc1_details.csv", newline="") as f:
        details = list(csv.reader(f))
    unit_column = details[0].index("Metric Unit")
    units.update(record[unit_column] for record in details[1:] if len(record) > unit_column)
    units.update(["Tbyte/s", "Mbyte/second", "usecond", "Khz", "inst/cycle", "Kbyte/ms"])
    for i, unit in enumerate(sorted(u for u in units if u)):
        write("ncu_units", f"unit_{i}.txt", unit)

    write("ncu_diagnosis", "gemm_metrics_stdout_head.txt", head_lines(ncu / "gemm_metrics_stdout.csv", 4))
    write("ncu_diagnosis", "nc2_log_prof_lines.txt", head_lines(ncu / "nc2_log.csv", 3))

    names = {record[table[0].index("Kernel Name")] for record in table[2:]}
    with open(DATA / "nsys" / "ns1_st_cuda_gpu_kern_sum.csv", newline="") as f:
        kernels = list(csv.reader(f))
    names.update(record[kernels[0].index("Name")] for record in kernels[1:])
    for i, name in enumerate(sorted(names)):
        write("kernel_name", f"name_{i}.txt", name)

    write("step_tokens", "engine_loop.json",
          '{"schema": "llmprof.step_tokens/1", "windows": [{"kinds": {"decode_batch": '
          '{"steps": 48, "prompt_tokens": 0, "decode_tokens": 384}}}]}\n')

    write("gpu_metrics", "steady.bin", gpu_metrics_program(200))
    write("gpu_metrics", "one_bad.bin", gpu_metrics_program(200, bad={50}))
    write("gpu_metrics", "two_types.bin", gpu_metrics_program(200, second_type=True))
    write("gpu_metrics", "renamed.bin", gpu_metrics_program(50, renamed=True))

    # The timeline engine's seeds: slices of the larger 2025.3 exports (graph nodes as kernels; eager); the whole
    # small ones (cpu2022, graphtrace) are in fuzz/fixture-seeds.txt.
    exports = ROOT / "tests" / "data" / "nsys-sqlite"
    write("nsys_sqlite", "nodetrace_head.sqlite", sqlite_slice(exports / "nodetrace.sqlite", 40))
    write("nsys_sqlite", "eager_head.sqlite", sqlite_slice(exports / "eager.sqlite", 40))

    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    print(f"corpus: {sum(1 for p in CORPUS.rglob('*') if p.is_file())} files, {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
