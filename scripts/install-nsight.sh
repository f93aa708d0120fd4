#!/usr/bin/env bash
# Fetches the real Nsight Systems / Nsight Compute command-line tools that Debian 12 ships in its
# `non-free` component (nsys 2022.4.2.1, ncu 2022.3.0; they run without a GPU) and unpacks them into a
# cache folder that deep-profile's probe and the tests search: $LLMPROF_NSIGHT_DIR, default
# /opt/llmprof/nsight (the unpacked packages are in <dir>/root/usr/...: Debian's own split layout).
# The machine's apt sources are not changed: `contrib non-free` is read from a temporary sources list.
# Safe to run again (a complete install is kept); called by scripts/install-deps.sh unless --no-nsight.
# Licence: NVIDIA's (non-free); see third_party/README.md.
set -euo pipefail
nsight_dir="${LLMPROF_NSIGHT_DIR:-/opt/llmprof/nsight}"
packages=(nsight-systems nsight-systems-target nsight-compute nsight-compute-target)
marker="$nsight_dir/installed.txt"
if [ -f "$marker" ] && [ -x "$nsight_dir/root/usr/lib/nsight-compute/ncu" ]; then
  echo "install-nsight.sh: Nsight tools already unpacked in $nsight_dir ($(tr '\n' ' ' < "$marker"))"
  exit 0
fi
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
if [ "$(. /etc/os-release && echo "${ID:-}")" != debian ] || [ ! -f "$keyring" ]; then
  echo "install-nsight.sh: not a Debian machine; skipping the real Nsight tools (install NVIDIA's Nsight" \
       "Systems/Compute and put nsys/ncu on PATH instead)" >&2
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/debs"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian $codename contrib non-free" > "$work/sources.list"
apt_options=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
             -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root -qq)
echo "install-nsight.sh: fetching ${packages[*]} from Debian $codename contrib/non-free (~300 MB)"
apt-get "${apt_options[@]}" update
(cd "$work/debs" && apt-get "${apt_options[@]}" download "${packages[@]}")
mkdir -p "$nsight_dir"
rm -rf "$nsight_dir/root.partial"
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$nsight_dir/root.partial"; done
# The importer's libssh.so -> ../../x86_64-linux-gnu/libssh.so.4 resolves inside the tree: point that at the
# system's libssh-4 (install-deps.sh installs it), so the unpacked QdstrmImporter loads.
mkdir -p "$nsight_dir/root.partial/usr/lib/x86_64-linux-gnu"
ln -sf /usr/lib/x86_64-linux-gnu/libssh.so.4 "$nsight_dir/root.partial/usr/lib/x86_64-linux-gnu/libssh.so.4"
rm -rf "$nsight_dir/root"
mv "$nsight_dir/root.partial" "$nsight_dir/root"
for deb in "$work"/debs/*.deb; do dpkg-deb -W --showformat='${Package}=${Version}\n' "$deb"; done > "$marker"
echo "install-nsight.sh: unpacked into $nsight_dir/root ($(tr '\n' ' ' < "$marker"))"
