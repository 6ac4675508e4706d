#!/usr/bin/env bash
# Builds the Debian package and installs it on a clean Debian 12: a fresh bookworm root made with
# debootstrap, where `apt-get install ./sparkguard_*.deb` must find every dependency the package
# declares. Then runs there `sparkguard --version`, `sparkguard plan --model llama-3.1-8b
# --budget-gb 100` and `man -w sparkguard`.
#
# Not a CTest test: debootstrap downloads and unpacks a whole base system (about a minute on a
# fast mirror, often several, and a few hundred MB), too slow and too network-bound for every CI
# run. tests/cli/test_install.py checks the package itself (control fields, file list, an unpacked
# binary that runs) on every run.
#
# Needs root (debootstrap, chroot, mounting /proc), the debootstrap package and Debian's archive
# (MIRROR, default http://deb.debian.org/debian). Usage:
#   scripts/check-deb-install.sh [WORK_DIR]     # default: a new directory under /var/tmp
# The root is removed at the end unless KEEP_ROOT=1. It shows that the catalog plan read is the
# installed one (/usr/share/sparkguard/profiles/models.toml): no source tree exists in the root.
set -euo pipefail

root_dir=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root_dir/build}
mirror=${MIRROR:-http://deb.debian.org/debian}
work=${1:-$(mktemp -d /var/tmp/sparkguard-deb-check.XXXXXX)}
chroot_dir=$work/bookworm

[ "$(id -u)" -eq 0 ] || { echo "check-deb-install: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "check-deb-install: apt-get install debootstrap" >&2; exit 2; }

step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }

cleanup() {
    mountpoint -q "$chroot_dir/proc" && umount "$chroot_dir/proc"
    if [ "${KEEP_ROOT:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

step "building and packaging in $build"
"$root_dir/scripts/build.sh"
mkdir -p "$work/deb"
(cd "$build" && cpack -G DEB -B "$work/deb" >/dev/null)
deb=$(ls "$work"/deb/sparkguard_*.deb)
dpkg-deb --field "$deb" Package Version Architecture Depends

step "debootstrap bookworm into $chroot_dir"
debootstrap --variant=minbase bookworm "$chroot_dir" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
mount -t proc proc "$chroot_dir/proc"
cp "$deb" "$chroot_dir/tmp/"

in_root() { chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

step "apt-get install ./$(basename "$deb") (and man-db, to look the page up)"
in_root apt-get update -qq
in_root sh -c "cd /tmp && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$(basename "$deb") man-db" |
    grep -E '^(Setting up|The following NEW)|^  ' || true

step "sparkguard --version"
in_root sparkguard --version
step "sparkguard plan --model llama-3.1-8b --budget-gb 100"
in_root sh -c 'cd / && sparkguard plan --model llama-3.1-8b --budget-gb 100'
step "man -w sparkguard"
in_root man -w sparkguard
in_root man -w 5 sparkguard-profile

step "done: the package installs and runs on a clean Debian 12"
