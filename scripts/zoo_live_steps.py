#!/usr/bin/env python3
"""A live zoo run's inferred steps beside the workload's own count, over the run's own export.

Usage (repository root, on the GPU machine after scripts/gpu-zoo.sh pipeline):
  python3 scripts/zoo_live_steps.py RUN_DIR FACTS_JSON engine|hf

The oracle is tests/tools/zoo_steps_expected.py's (Python's sqlite3 over RUN_DIR/nsys/profile.sqlite, the capture
the step analysis reads, and the facts the workload wrote about itself); the run's side is its
analysis/step_kinds.json. Prints one line per kind: steps and GPU time of each, and their ratio. The engine's kinds
are matched by step count (the report names kinds by launch shape, `uniform-1`/`varying`, the workload by what it
scheduled, `decode`/`mixed`).
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "tools"))
import zoo_steps_expected as oracle  # noqa: E402


def report_window(run):
    windows = json.loads((run / "analysis" / "step_kinds.json").read_text())["windows"]
    inferred = [window for window in windows if window.get("inferred")]
    return (inferred or windows)[0]


def main():
    run, facts_file, shape = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    export = run / "nsys" / "profile.sqlite"
    own, work, to_host, _, facts = oracle.read_export(export, facts_file)
    window = report_window(run)
    reported = sorted(window["kinds"], key=lambda kind: -kind["count"])
    print(f"{run.name}: report: {window['steps']} steps, inferred={window.get('inferred')}, "
          f"check: {window.get('inference_check', '')!r}")
    if shape == "hf":
        last_sync = max(i for i, (_, _, correlation, call) in enumerate(own)
                        if call.startswith(oracle.SYNC_CALLS) or correlation in to_host)
        total = sum(work.get(correlation, 0) for _, _, correlation, _ in own[:last_sync + 1])
        gpu = sum(kind["gpu_time_ns"] for kind in reported)
        print(f"  workload: {facts['forward_passes']} forward passes ({facts['prefill_passes']} prefill + "
              f"{facts['decode_passes']} decode), GPU time {total} ns; report: {window['steps']} steps "
              f"({', '.join(kind['name'] + ' x' + str(kind['count']) for kind in reported)}), GPU time {gpu} ns, "
              f"ratio {gpu / total:.4f}")
        return
    _, kinds = oracle.engine_kinds(own, work, to_host, facts, run.name)
    truth = sorted(kinds.items(), key=lambda item: -len(item[1]))
    for (name, steps), kind in zip(truth, reported):
        print(f"  {name}: workload {len(steps)} steps, GPU time {sum(steps)} ns; report `{kind['name']}`: "
              f"{kind['count']} steps, GPU time {kind['gpu_time_ns']} ns, ratio {kind['gpu_time_ns'] / sum(steps):.4f}")


if __name__ == "__main__":
    main()
