#!/bin/sh
# Hostile cases against the real `deep-profile` binary (nothing lost, no figure that was not
# measured, a truthful exit code). One case per invocation, so each is its own ctest entry.
# Usage: hardening_cli_test.sh DEEP_PROFILE_EXE CASE
set -u
exe=$1
case_name=$2
data=$(cd "$(dirname "$0")/../data" && pwd)
handshake=$(cd "$(dirname "$0")/../support" && pwd)/handshake.sh
. "$handshake"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
# No nsys/ncu on PATH: stage1 runs the workload bare, the profilers are skipped (exit 3), which is
# all these cases need.
run() { PATH=/usr/bin:/bin "$exe" run --set run.min_free_space_gb=0 "$@"; }
expect_status() {  # expect_status WANTED WHAT
  [ "$status" -eq "$1" ] || fail "$2: exit $status, expected $1; stderr: $(cat "$work/err" 2>/dev/null)"
}

case_retention() {
  root="$work/root"
  # The first run's workload says it runs (its pid file), then waits for the test's release: the first run is
  # unfinished for as long as the test needs, however slow the machine (tests/support/handshake.sh).
  run --set run.runs_root="$root" -- sh -c '. "$0"; announce_ready "$1"; await_file "$2" 300' "$handshake" \
    "$work/first.ready" "$work/first.release" >"$work/first.out" 2>&1 &
  first=$!
  await_file "$work/first.ready" 300 || fail "the first run's workload never started: $(cat "$work/first.out")"
  running=$(ls "$root")
  [ -n "$running" ] || fail "the first run made no directory"
  run --set run.runs_root="$root" --set run.keep_newest_runs=1 -- true >"$work/second.out" 2>"$work/err"
  [ -f "$root/$running/run.json" ] || fail "retention deleted the unfinished run $running"
  grep -q "retention kept .*$running" "$work/second.out" || fail "console does not say the unfinished run was kept"
  echo release > "$work/first.release"
  wait $first
  grep -q '"status": "' "$root/$running/run.json" || fail "the first run lost its run.json"
  second=$(ls "$root" | grep -v "^$running\$")
  grep -q "retention kept .*$running" "$root/$second/deep-profile.log" || fail "deep-profile.log does not name the kept run"
  run --set run.runs_root="$root" --set run.keep_newest_runs=1 -- true >"$work/third.out" 2>"$work/err"
  [ ! -e "$root/$running" ] || fail "a finished run beyond keep_newest_runs was not removed"
  grep -q "retention removed the old run .*$running" "$work/third.out" || fail "console does not name the removed run"
  third=$(ls "$root")
  grep -q "retention removed the old run .*$running" "$root/$third/deep-profile.log" || fail "deep-profile.log does not name the removed run"
}

# Every JSON file of the run is strict UTF-8 JSON (Python's json rejects nothing llmprof writes).
check_strict_json() {
  for file in "$@"; do
    python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$file" 2>"$work/py" ||
      fail "$file is not UTF-8 JSON: $(cat "$work/py")"
  done
}

case_utf8() {
  dir=$(printf '%s/x\351' "$work")   # a Latin-1 directory name
  mkdir "$dir" && cd "$dir" || fail "cannot make the Latin-1 directory"
  arg=$(printf 'caf\351')
  # The workload's metrics (a recorded decode run) name its NVTX ranges in Latin-1.
  sed "s/\"prefill\", \"decode\"/\"prefill\", \"d$(printf '\351')code\"/" "$data/analysis/workload_metrics_decode.json" >"$work/metrics.json"
  run --set run.runs_root=runs --set run.run_id=r -- sh -c 'cp "$0" "$LLMPROF_METRICS_FILE"' "$work/metrics.json" "$arg" \
    >"$work/out" 2>"$work/err"
  [ -f runs/r/run.json ] || fail "no run.json: $(cat "$work/err")"
  check_strict_json runs/r/run.json runs/r/inputs.json runs/r/env.json
  python3 -c 'import tomllib,sys; tomllib.load(open(sys.argv[1],"rb"))' runs/r/config.toml 2>"$work/py" ||
    fail "config.toml does not load: $(cat "$work/py")"
  # The original bytes are kept for reproducing the command.
  python3 - "$dir" "$arg" <<'PY' || fail "argv/command bytes not kept in base64"
import base64, json, os, sys
inputs = json.load(open("runs/r/inputs.json", encoding="utf-8"))
assert base64.b64decode(inputs["argv_base64"][4]) == os.fsencode(sys.argv[2]), inputs
run = json.load(open("runs/r/run.json", encoding="utf-8"))
stage1 = next(s for s in run["stages"] if s["name"] == "stage1")
assert os.fsencode(sys.argv[1]) in base64.b64decode(stage1["command_base64"]), stage1
PY
  [ -f runs/r/analysis/report.json ] || fail "the run wrote no report.json: $(cat "$work/out")"
  check_strict_json runs/r/analysis/report.json
  "$exe" analyze runs/r >"$work/out" 2>"$work/err"
  status=$?
  expect_status 0 "analyze of a run with Latin-1 bytes"
  check_strict_json runs/r/analysis/report.json
  "$exe" report runs/r >"$work/out" 2>"$work/err"
  status=$?
  expect_status 0 "report of a run in a Latin-1 directory"
  check_strict_json runs/r/run.json
}

# A disk that fills up mid-run: a 2 MiB tmpfs (needs root; skipped, LLMPROF-SKIPPED, where mount is refused).
case_disk_full() {
  mkdir "$work/small"
  mount -t tmpfs -o size=2m tmpfs "$work/small" 2>/dev/null || { echo "LLMPROF-SKIPPED: cannot mount a tmpfs here"; exit 0; }
  trap 'umount "$work/small"; rm -rf "$work"' EXIT
  run --set run.runs_root="$work/small" --set run.run_id=r -- sh -c 'head -c 8000000 /dev/zero' >"$work/out" 2>"$work/err"
  status=$?
  expect_status 3 "a run that fills the disk"
  python3 - "$work/small/r/run.json" <<'PY' || fail "run.json does not record the full disk"
import json, sys
run = json.load(open(sys.argv[1]))
assert run["status"] != "running", run["status"]
stage1 = next(s for s in run["stages"] if s["name"] == "stage1")
assert stage1["status"] == "failed" and "no space left" in stage1["reason"], stage1
PY
  grep -q "no space left" "$work/out" || fail "the stage table does not name the full disk: $(cat "$work/out")"
}

# Bare KEY=VALUE words on run/sweep get the same checks as --set (before: silently ignored).
case_positional_words() {
  run nsys.nvtx_capture=prefill run.top_n_kernels=abc -- true >"$work/out" 2>"$work/err"
  status=$?
  expect_status 2 "a positional word with a bad value"
  grep -q "run.top_n_kernels" "$work/err" || fail "the error does not name the key: $(cat "$work/err")"
  run stray -- true >"$work/out" 2>"$work/err"
  status=$?
  expect_status 2 "a stray positional word"
  grep -q "'stray' is not an override" "$work/err" || fail "the stray word is not named: $(cat "$work/err")"
  "$exe" sweep --point run.top_n_kernels=2 nsys.nvtx_captur=x -- true >"$work/out" 2>"$work/err"
  status=$?
  expect_status 2 "sweep with a misspelt positional key"
  run run.runs_root="$work/runs" run.run_id=from-word -- true >"$work/out" 2>"$work/err"
  [ -f "$work/runs/from-word/run.json" ] || fail "positional words were not applied: $(cat "$work/err")"
  grep -q '^top_n_kernels' "$work/runs/from-word/config.toml" || fail "no config.toml"
}

# A timeout too large for the clock saturates (before: the workload was killed at 0.0 s, exit 124).
case_huge_timeout() {
  run --set run.runs_root="$work/runs" --set run.run_id=r --set workload.timeout_s=1e10 -- sh -c 'sleep 0.3' \
    >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -ne 124 ] || fail "timeout_s=1e10 was taken as an immediate timeout: $(cat "$work/out")"
  python3 - "$work/runs/r/run.json" <<'PY' || fail "stage1 did not run to its end"
import json, sys
stage1 = next(s for s in json.load(open(sys.argv[1]))["stages"] if s["name"] == "stage1")
assert stage1["status"] == "ok" and stage1["exit_code"] == 0, stage1
PY
}

# A sweep checks every point before running any (before: point 2's typo surfaced after point 1 ran; exit 1).
case_sweep_plan() {
  PATH=/usr/bin:/bin "$exe" sweep --set run.min_free_space_gb=0 --set run.runs_root="$work/runs" \
    --point run.top_n_kernels=2 --point nsys.nvtx_captur=decode --point run.top_n_kernels=-1 \
    -- sh -c "touch '$work/ran'" >"$work/out" 2>"$work/err"
  status=$?
  expect_status 2 "a sweep with a bad point"
  [ ! -e "$work/ran" ] || fail "a point ran although the plan was invalid"
  grep -q "did you mean nsys.nvtx_capture" "$work/err" || fail "the misspelt key is not named: $(cat "$work/err")"
  grep -q "run.top_n_kernels" "$work/err" || fail "the third point's bad value is not named: $(cat "$work/err")"
}

"case_$case_name"
