#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`, clang) and runs each for SECONDS_PER_TARGET.
#
#   fuzz/run-fuzzers.sh [SECONDS_PER_TARGET] [TARGET...]     (default 600 s, every fuzz/*_fuzzer.cpp)
#
# Environment: FUZZ_JOBS (targets run at once, default 2), FUZZ_BUILD_DIR (default build/fuzz),
# FUZZ_NICE (nice level, default 19), FUZZ_SKIP_BUILD=1 (run the binaries already built).
# Each target starts from the seeds in fuzz/corpus/<target>/ and the fixtures fuzz/fixture-seeds.txt names for
# it (directories passed as they are, files copied into a temporary directory), all read only: libFuzzer writes
# new inputs only into the first corpus directory, $FUZZ_BUILD_DIR/corpus/<target>/, so the committed seeds stay
# small and no fixture is written to.
# Logs: $FUZZ_BUILD_DIR/logs/<target>.log; crashing inputs: $FUZZ_BUILD_DIR/findings/<target>/.
# Exit status 1 when any target found a crash, leak, timeout or out-of-memory input.
set -euo pipefail

seconds=${1:-600}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build/fuzz}
jobs=${FUZZ_JOBS:-2}
nice_level=${FUZZ_NICE:-19}

cd "$root"
# UB is fatal so that libFuzzer saves the input; leaks are reported (libFuzzer default).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export CCACHE_NOHASHDIR=true CCACHE_BASEDIR=$root
if [[ -z ${FUZZ_SKIP_BUILD:-} ]]; then
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake --preset fuzz -B "$build" >/dev/null
  fi
  nice -n "$nice_level" cmake --build "$build" --target fuzzers -j2
fi

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for source in fuzz/*_fuzzer.cpp; do
    name=$(basename "$source" _fuzzer.cpp)
    targets+=("$name")
  done
fi

# The fixture seeds (fuzz/fixture-seeds.txt: "target path" lines): a directory is a corpus directory of its own,
# a file goes into $seed_files/<target>/, removed when the script ends.
seed_files=$(mktemp -d "${TMPDIR:-/tmp}/llmprof-fuzz-seeds.XXXXXX")
trap 'rm -rf "$seed_files"' EXIT
declare -A seed_dirs=()
while read -r target path rest; do
  [[ -z $target || $target == \#* ]] && continue
  if [[ -n $rest || -z $path ]]; then
    echo "fuzz/fixture-seeds.txt: expected \"target path\", got: $target $path $rest" >&2
    exit 2
  fi
  if [[ -d $path ]]; then
    seed_dirs[$target]+="$path"$'\n'
  elif [[ -f $path ]]; then
    mkdir -p "$seed_files/$target"
    cp "$path" "$seed_files/$target/${path//\//_}"
  else
    echo "fuzz/fixture-seeds.txt: $path (a seed of $target) does not exist; update the list" >&2
    exit 2
  fi
done <fuzz/fixture-seeds.txt

mkdir -p "$build/logs"
run_target() {
  local name=$1
  local corpus=$build/corpus/$name findings=$build/findings/$name
  mkdir -p "$corpus" "$findings"
  local seeds=() dir
  if [[ -d fuzz/corpus/$name ]]; then seeds+=("fuzz/corpus/$name"); fi
  if [[ -d $seed_files/$name ]]; then seeds+=("$seed_files/$name"); fi
  while read -r dir; do
    if [[ -n $dir ]]; then seeds+=("$dir"); fi
  done <<<"${seed_dirs[$name]:-}"
  nice -n "$nice_level" "$build/fuzz/fuzz_$name" \
    -max_len=65536 -timeout=25 -rss_limit_mb=2048 -max_total_time="$seconds" -print_final_stats=1 \
    -dict=fuzz/csv.dict -artifact_prefix="$findings/" "$corpus" "${seeds[@]}" \
    >"$build/logs/$name.log" 2>&1 || true
}

echo "fuzzing ${#targets[@]} targets for ${seconds}s each, $jobs at a time (logs in $build/logs)"
running=0
for name in "${targets[@]}"; do
  run_target "$name" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

status=0
printf '%-22s %14s %10s %8s %8s  %s\n' target executions exec/s cov corpus findings
for name in "${targets[@]}"; do
  log=$build/logs/$name.log
  executions=$(grep -oE 'stat::number_of_executed_units:[[:space:]]*[0-9]+' "$log" | tail -1 | awk '{print $NF}')
  rate=$(grep -oE 'stat::average_exec_per_sec:[[:space:]]*[0-9]+' "$log" | tail -1 | awk '{print $NF}')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  corpus=$(find "$build/corpus/$name" -type f | wc -l)
  findings=$(find "$build/findings/$name" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' -o -name 'slow-unit-*' \) | wc -l)
  if grep -qE '^==[0-9]+==ERROR|fuzz invariant failed|runtime error:' "$log"; then findings=$((findings > 0 ? findings : 1)); fi
  printf '%-22s %14s %10s %8s %8s  %s\n' "$name" "${executions:-?}" "${rate:-?}" "${cov:-?}" "$corpus" "$findings"
  if ((findings > 0)); then
    status=1
    grep -m3 -E 'ERROR|invariant failed|runtime error:' "$log" | sed 's/^/    /'
  fi
done
exit $status
