#!/usr/bin/env python3
"""Builds the seed corpora fuzz/corpus/<target>/ and the dictionary seeds from the real fixtures.

Seeds are small slices of tests/data/h100-nsight-2025.3 (each < 64 KB): a few whole small files,
the first rows and first columns of the wide ncu raw pages, the NVTX cells and unit strings.
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


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    nsys = sorted((DATA / "nsys").glob("*.csv"))
    ncu = DATA / "ncu"

    for path in nsys:
        write("nsys_stats", path.name, path.read_bytes())
        write("csv_reader", path.name, path.read_bytes())

    write("ncu_csv", "gemm_details.csv", (ncu / "gemm_details.csv").read_bytes())
    write("ncu_csv", "gemm_metrics_stdout.csv", (ncu / "gemm_metrics_stdout.csv").read_bytes())
    write("ncu_csv", "nc1_details_head.csv", head_lines(ncu / "nc1_details.csv", 120))
    write("ncu_csv", "nc2_log_head.csv", head_lines(ncu / "nc2_log.csv", 120))
    write("ncu_csv", "nc1_raw_slice.csv", raw_slice(ncu / "nc1_raw.csv", 3, 60))
    write("ncu_csv", "nc1_raw_base_slice.csv", raw_slice(ncu / "nc1_raw_base.csv", 3, 60))
    write("ncu_csv", "gemm_raw_flop.csv",
          raw_slice_columns(ncu / "gemm_raw.csv", ["gpu__time_duration", "sm__ops_path_tensor_src_bf16", "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__sass_thread_inst_executed_op_ffma"]))
    write("ncu_csv", "nc1_raw_flop.csv",
          raw_slice_columns(ncu / "nc1_raw.csv", ["gpu__time_duration", "sm__ops_path_tensor_src_fp16", "dram__bytes_read.sum", "sm__cycles_elapsed.avg.per_second"]))
    write("ncu_csv", "ncu_nokernels.txt", (DATA / "cli" / "ncu_nokernels.txt").read_bytes())

    write("csv_reader", "nc1_raw_slice.csv", raw_slice(ncu / "nc1_raw.csv", 2, 40))
    write("csv_reader", "nc2_log_head.csv", head_lines(ncu / "nc2_log.csv", 30))
    write("csv_reader", "gemm_metrics_stdout.csv", (ncu / "gemm_metrics_stdout.csv").read_bytes())
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

    cli = DATA / "cli"
    for name in ["nsys_version.txt", "ncu_version.txt", "nsys_status_environment.txt", "ncu_sections.txt",
                 "ncu_sets.txt", "transcripts.md"]:
        write("tool_listing", name, (cli / name).read_bytes())
    for name in ["ncu_nokernels.txt", "ncu_nvtx_nomatch.txt", "transcripts.md"]:
        write("ncu_diagnosis", name, (cli / name).read_bytes())
    write("ncu_diagnosis", "gemm_metrics_stdout_head.txt", head_lines(ncu / "gemm_metrics_stdout.csv", 4))
    write("ncu_diagnosis", "nc2_log_prof_lines.txt", head_lines(ncu / "nc2_log.csv", 3))

    names = {record[table[0].index("Kernel Name")] for record in table[2:]}
    with open(DATA / "nsys" / "ns1_st_cuda_gpu_kern_sum.csv", newline="") as f:
        kernels = list(csv.reader(f))
    names.update(record[kernels[0].index("Name")] for record in kernels[1:])
    for i, name in enumerate(sorted(names)):
        write("kernel_name", f"name_{i}.txt", name)

    analysis = ROOT / "tests" / "data" / "analysis" / "workload_metrics_decode.json"
    if analysis.exists():
        write("workload_metrics", analysis.name, analysis.read_bytes())
    for path in sorted((ROOT / "tests" / "data" / "runs").glob("*/stage1/metrics.json"))[:2]:
        write("workload_metrics", path.parent.parent.name + "_metrics.json", path.read_bytes())
    tokens = ROOT / "tests" / "data" / "serving" / "serving_h100_step_tokens.json"
    if tokens.exists():
        write("step_tokens", tokens.name, tokens.read_bytes())
    write("step_tokens", "engine_loop.json",
          '{"schema": "llmprof.step_tokens/1", "windows": [{"kinds": {"decode_batch": '
          '{"steps": 48, "prompt_tokens": 0, "decode_tokens": 384}}}]}\n')
    for path in sorted((ROOT / "config").glob("*.toml")):
        write("config", path.name, path.read_bytes())

    # The timeline engine's seeds: whole small exports (nsys 2022.4 CPU-only; 2025.3 graph trace) and
    # slices of the larger 2025.3 ones (graph nodes as kernels; eager).
    exports = ROOT / "tests" / "data" / "nsys-sqlite"
    for name in ["cpu2022.sqlite", "graphtrace.sqlite"]:
        write("nsys_sqlite", name, (exports / name).read_bytes())
    write("nsys_sqlite", "nodetrace_head.sqlite", sqlite_slice(exports / "nodetrace.sqlite", 40))
    write("nsys_sqlite", "eager_head.sqlite", sqlite_slice(exports / "eager.sqlite", 40))

    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    print(f"corpus: {sum(1 for p in CORPUS.rglob('*') if p.is_file())} files, {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
