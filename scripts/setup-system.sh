#!/usr/bin/env bash
# Install the system parts the app and its tests need (Debian 12 / Ubuntu): Chromium (e2e and the
# UI benchmark), PostgreSQL 15 (the HQ sync server's tests), the OpenCV headers and FFmpeg's
# libavformat headers (the native capture addon: its recordings are muxed by libavformat; Debian's
# libopencv-dev already pulls libavformat-dev in, it is named so the addon's own link is explicit). Installs only what is missing. Works in a root shell (a container: no sudo
# needed or present) and as a user (then it uses sudo, and says so when sudo is missing).
#
# Usage: scripts/setup-system.sh [--dry-run] [--all]
#   --dry-run   print the commands it would run, run nothing (exit 0)
#   --all       install (or repair) every part, also those that look installed
# Called by the README's set-up and by .ci/run, so both install the same parts the same way.
set -euo pipefail

dry_run=0
all=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry_run=1 ;;
    --all) all=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup-system: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

need_pkgs=()
if [ "$all" -eq 1 ]; then need_pkgs=(chromium postgresql-15 libopencv-dev libavformat-dev g++ make python3); else
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need_pkgs+=(chromium)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need_pkgs+=(postgresql-15)
[ -d /usr/include/opencv4 ] || need_pkgs+=(libopencv-dev)
pkg-config --exists libavformat 2>/dev/null || need_pkgs+=(libavformat-dev)
# node-gyp builds the native addons during `npm ci`: it needs a C++ toolchain, make and python3.
command -v g++ >/dev/null 2>&1 || need_pkgs+=(g++)
command -v make >/dev/null 2>&1 || need_pkgs+=(make)
command -v python3 >/dev/null 2>&1 || need_pkgs+=(python3)
fi

if [ ${#need_pkgs[@]} -eq 0 ]; then
  echo "setup-system: everything is installed (chromium, postgresql-15, libopencv-dev, libavformat-dev, g++, make, python3)"
  exit 0
fi

# sudo only when not root: a root shell in a container usually has no sudo at all.
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  elif [ "$dry_run" -eq 0 ]; then
    echo "setup-system: need to install ${need_pkgs[*]} as root, but this is not a root shell and sudo is not installed." >&2
    echo "setup-system: run this script as root (e.g. 'su -c scripts/setup-system.sh'), or install sudo." >&2
    exit 1
  else
    as_root=(sudo)
  fi
fi

run() {
  echo "+ $*"
  if [ "$dry_run" -eq 0 ]; then "$@"; fi
}

echo "setup-system: installing ${need_pkgs[*]}"
run "${as_root[@]}" apt-get update -qq
run "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
