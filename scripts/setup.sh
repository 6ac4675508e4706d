#!/usr/bin/env bash
# Installs what sparkguard's build and tests need on Debian 12. Idempotent: when everything is
# already installed it only checks, in well under a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libspdlog-dev libfmt-dev libtomlplusplus-dev nlohmann-json3-dev catch2
  libyaml-cpp-dev  # trainer configs (Axolotl, LLaMA-Factory, torchtune, TRL, Unsloth) are YAML
  python3 python3-pytest python3-torch libopenblas0-pthread
  slurmd slurmctld slurm-client munge  # the two-node Slurm test bed (tests/cli/slurm_bed.py)
  # stand-in trainers parse arguments with the libraries the real ones use
  python3-yaml python3-omegaconf python3-fire python3-click
  util-linux procps man-db groff-base file time tmux
  curl  # the --notify webhook examples, tested against a local listener
  systemd  # systemd-analyze verify checks the unit examples
  strace  # tests/cli/test_thermal_fdatasync.py counts the fdatasync per thermal.csv row
  sudo  # the drop-caches rung as a normal user: sudo -n sparkguard drop-caches
  dpkg-dev  # dpkg-shlibdeps, for cpack -G DEB
  chromium fonts-dejavu-core
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
