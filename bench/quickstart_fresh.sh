#!/usr/bin/env bash
# The README's quick start on a fresh Debian 12 machine, timed: a new minimal Debian 12 root (debootstrap
# --variant=minbase, plus git, ca-certificates, sudo and procps: what a user has before the README's first command),
# a clone of this repository's HEAD inside it, then in a chroot `scripts/install-deps.sh --main-job` (the install)
# and `scripts/quickstart.sh` (configure, build without ccache's cache, the run). Prints both times and their sum,
# and fails when the quick start's run did not reach its report with the nsys stage ok (issue 35: the first fresh
# root found the Nsight importer's libpfm.so.4 missing from the main job's packages).
# Needs root, debootstrap (apt-get install debootstrap) and Debian's mirror. The root is built under --work
# (default /var/tmp/llmprof-quickstart-fresh) and kept pristine for the next run; --keep leaves the used copy until
# the next run, which releases whatever an earlier one left (its mounts included).
# Usage: bench/quickstart_fresh.sh [--work DIR] [--keep] [--mirror URL]
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
work=/var/tmp/llmprof-quickstart-fresh
mirror=http://deb.debian.org/debian
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "quickstart_fresh.sh: unknown option '$1' (valid: --work, --mirror, --keep)" >&2; exit 2 ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then echo "quickstart_fresh.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; fi
work="$(realpath -m "$work")"  # the mount checks below compare with /proc/mounts, which holds resolved paths
if ! command -v debootstrap > /dev/null; then
  echo "quickstart_fresh.sh: debootstrap is missing: apt-get install debootstrap" >&2; exit 2
fi
mkdir -p "$work"
# Mounts under a directory, deepest first, as /proc/mounts shows them (resolved paths; ours hold no spaces).
mounts_under() { awk -v prefix="$1/" 'index($2, prefix) == 1 { print $2 }' /proc/mounts | sort -r; }
# What a run rooted in DIR left: its processes (nsys's daemons, say: ours by their root directory), then its mounts.
# Each mount is one this script made private, so unmounting touches nothing of this machine's.
release_mounts() {  # release_mounts DIR
  local proc target
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2> /dev/null)" = "$1" ] && kill -KILL "${proc#/proc/}" 2> /dev/null
  done
  for target in $(mounts_under "$1"); do
    umount "$target" 2> /dev/null || umount -l "$target" || echo "quickstart_fresh.sh: could not unmount $target" >&2
  done
  # Never delete through a mount that is still there (it would be this machine's /dev or /sys).
  if [ -n "$(mounts_under "$1")" ]; then
    echo "quickstart_fresh.sh: mounts under $1 remain (grep $1 /proc/mounts); not deleting it" >&2
    return 1
  fi
}
# One run at a time. Whatever a run killed hard left (its mounts, a half-built root; a session's end once left /proc,
# /dev and /sys mounted here, and the next run must not fail on them) is then ours to release: no live run owns it.
exec 9> "$work/lock"
flock -w 7200 9 || { echo "quickstart_fresh.sh: another run has held $work/lock for 2 hours" >&2; exit 1; }
for stale in "$work"/root "$work"/root.*; do
  [ -d "$stale" ] || continue
  echo "quickstart_fresh.sh: releasing $stale, which an earlier run left"
  release_mounts "$stale" && rm -rf --one-file-system "$stale" || true
done
pristine="$work/pristine"
complete="$pristine/.llmprof-debootstrap-complete"  # written only once debootstrap has succeeded
release_mounts "$pristine" || exit 1  # a debootstrap killed hard leaves its target's /proc mounted
if [ ! -f "$complete" ]; then
  rm -rf --one-file-system "$pristine"
  echo "quickstart_fresh.sh: debootstrap of Debian 12 (bookworm, minbase) into $pristine"
  debootstrap --variant=minbase --include=git,ca-certificates,sudo,procps bookworm "$pristine" "$mirror" \
    > "$work/debootstrap.log" 2>&1 || { echo "quickstart_fresh.sh: debootstrap failed; see $work/debootstrap.log" >&2; exit 1; }
  touch "$complete"
fi
# A root of this run's own, so that one an earlier run could not release never blocks this one.
root="$(mktemp -d "$work/root.XXXXXX")"
rmdir "$root"
cp -ax "$pristine" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Only what the tools need, each mount its own and private: /proc, the device nodes, a /dev/shm of its own (nsys's
# shared memory) and a read-only /sys.
cleanup() {
  set +e
  release_mounts "$root" && [ "$keep" -eq 0 ] && rm -rf --one-file-system "$root"
}
trap cleanup EXIT
mount_private() {  # mount_private TARGET ARGS...
  local target="$1"; shift
  mount "$@" "$target"
  mount --make-private "$target"
}
mount_private "$root/proc" -t proc proc
mount_private "$root/dev" --bind /dev
mount_private "$root/dev/shm" -t tmpfs tmpfs
mount_private "$root/sys" --bind -o ro /sys
git clone -q "$source_dir" "$root/root/libllmprof"
echo "quickstart_fresh.sh: cloned $(git -C "$source_dir" rev-parse --short HEAD) into the fresh root; install, then the quick start"
cat > "$root/root/quickstart-fresh.sh" <<'EOF'
#!/bin/bash
cd /root/libllmprof
seconds() { date +%s.%N; }
start=$(seconds)
scripts/install-deps.sh --main-job > /root/install.log 2>&1 || { echo "install failed"; exit 10; }
installed=$(seconds)
status=0
scripts/quickstart.sh > /root/quickstart.log 2>&1 || status=$?
done_at=$(seconds)
echo "$start $installed $done_at $status" > /root/times.txt
EOF
chmod +x "$root/root/quickstart-fresh.sh"
# The lock's descriptor stays out of the root, so that a daemon the quick start leaves running cannot hold it.
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 /root/quickstart-fresh.sh 9>&- ||
  { echo "quickstart_fresh.sh: the install failed; see $root/root/install.log (--keep keeps it)" >&2; exit 1; }
read -r start installed done_at status < "$root/root/times.txt"
awk -v start="$start" -v installed="$installed" -v done_at="$done_at" 'BEGIN {
  printf "install (scripts/install-deps.sh --main-job): %6.1f s\n", installed - start
  printf "quick start (configure, build, run):          %6.1f s\n", done_at - installed
  printf "to the first report:                          %6.1f s\n", done_at - start }'
tail -1 "$root/root/quickstart.log"
cp "$root/root/install.log" "$root/root/quickstart.log" "$work/"
run_json="$(ls -d "$root"/root/libllmprof/runs/*/run.json 2> /dev/null | tail -1)"
if [ -z "$run_json" ] || [ ! -f "$(dirname "$run_json")/report.md" ]; then
  echo "quickstart_fresh.sh: FAIL: the quick start left no run with a report (exit $status); see $work/quickstart.log" >&2
  exit 1
fi
python3 - "$run_json" <<'PY' || { echo "quickstart_fresh.sh: FAIL; see $work/quickstart.log" >&2; exit 1; }
import json, sys
run = json.load(open(sys.argv[1]))
stages = {stage["name"]: stage for stage in run["stages"]}
for name in ("stage1", "nsys", "report"):
    status = stages.get(name, {}).get("status")
    if status != "ok":
        print(f"FAIL: stage {name} is {status}: {stages.get(name, {}).get('reason', '')}")
        sys.exit(1)
print("stages: " + ", ".join(f"{name} {stage['status']}" for name, stage in stages.items()))
PY
