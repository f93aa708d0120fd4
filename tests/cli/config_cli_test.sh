#!/bin/sh
# `deep-profile config` end to end: prints the resolved TOML, reads it back identically, and exits 2 with
# the key and a suggestion on configuration errors. Usage: config_cli_test.sh DEEP_PROFILE_EXE
set -u
exe=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The preset and the overrides are applied, in order.
"$exe" config --preset quick nsys.nvtx_capture=prefill --set workload.env.FOO=bar run.top_n_kernels=7 \
  >"$work/quick.toml" 2>"$work/err" || fail "config --preset quick exited $?: $(cat "$work/err")"
grep -qx 'top_n_kernels = 7' "$work/quick.toml" || fail "override run.top_n_kernels=7 not applied"
grep -qx 'set = "basic"' "$work/quick.toml" || fail "quick preset's ncu.set not applied"
grep -qx 'nvtx_capture = "prefill"' "$work/quick.toml" || fail "bare-string override not applied"
grep -qx 'env = { FOO = "bar" }' "$work/quick.toml" || fail "table entry override not applied"

# What it prints loads back to the same configuration (the comment lines name the sources and differ).
"$exe" config --config "$work/quick.toml" >"$work/again.toml" 2>"$work/err" || fail "reloading exited $?: $(cat "$work/err")"
grep -v '^#' "$work/quick.toml" >"$work/a"
grep -v '^#' "$work/again.toml" >"$work/b"
cmp -s "$work/a" "$work/b" || fail "round trip differs: $(diff "$work/a" "$work/b")"

# Configuration errors: exit status 2, the key, where, and the suggestion on stderr.
"$exe" config nsys.nvtx_captur=decode >/dev/null 2>"$work/err"
status=$?
[ "$status" -eq 2 ] || fail "unknown key exited $status, expected 2"
grep -q "did you mean nsys.nvtx_capture?" "$work/err" || fail "no suggestion: $(cat "$work/err")"
printf '[run]\ntop_n_kernels = "ten"\n' >"$work/bad.toml"
"$exe" config --config "$work/bad.toml" >/dev/null 2>"$work/err"
status=$?
[ "$status" -eq 2 ] || fail "wrong type exited $status, expected 2"
grep -q "bad.toml:2:17" "$work/err" || fail "wrong type does not name file:line:column: $(cat "$work/err")"
"$exe" config --preset quik >/dev/null 2>"$work/err"
status=$?
[ "$status" -eq 2 ] || fail "unknown preset exited $status, expected 2"
grep -q "available presets: deep-profile, quick, sampled, serving, thorough" "$work/err" || fail "presets not listed: $(cat "$work/err")"

# --keys lists the schema.
"$exe" config --keys | grep -q '^nsys.nvtx_capture  *string ' || fail "--keys does not list nsys.nvtx_capture"
echo "deep-profile config: all checks passed"
