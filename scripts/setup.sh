#!/usr/bin/env bash
# Idempotent set-up for a fresh clone: Node packages, the software GPU adapter, and with
# --browser the headless Chromium of the report tests.
# Run by ./solverlab and scripts/test.sh; prints only what it does, or what is missing.
#
#   setup.sh            set up (as root: apt-get install what is missing; otherwise say what to install)
#   setup.sh --browser  the same, and the headless browser of the report and viewer tests
#   setup.sh --check [--browser]
#                       install nothing: print one line per missing piece, exit 1 if any is missing
#
# Every check reads its whole input: no `a | grep -q` pipe, whose early exit can kill the writer
# with SIGPIPE and, under pipefail, report as missing what is installed.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
cd "$root"

check_only=0 browser=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --browser) browser=1 ;;
    *) echo "setup.sh: unknown option '$arg' (options: --browser, --check)" >&2; exit 2 ;;
  esac
done

major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$major" -lt 20 ]; then
  echo "solverlab: Node.js 20 or newer is needed (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 2
fi

# Node packages: install when missing or when package-lock.json's content changed since the last
# install (its hash is kept beside the packages; a modification time would call a fresh checkout of
# the same lockfile changed, and a reinstall through a node_modules shared with another worktree
# empties that worktree's packages under it)
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
installed_hash="$(cat node_modules/.solverlab-lock-sha256 2>/dev/null || true)"
if [ ! -d node_modules ] || [ "$lock_hash" != "$installed_hash" ]; then
  if [ "$check_only" = 1 ]; then
    echo "solverlab: missing: Node packages (run npm ci in $root)" >&2
    exit 1
  fi
  echo "solverlab: installing Node packages (npm ci) …" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$lock_hash" > node_modules/.solverlab-lock-sha256
fi

# The Vulkan loader libvulkan.so.1: listed in the dynamic linker's cache, whose lines read
# "<tab>libvulkan.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libvulkan.so.1". The listing is
# read whole into a variable and its first field compared exactly. ldconfig lives in /sbin, which
# is not on every user's PATH; without it, the usual library folders are looked in.
has_vulkan_loader() {
  local ldconfig_bin='' candidate cache name _
  for candidate in "$(command -v ldconfig || true)" /sbin/ldconfig /usr/sbin/ldconfig; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then ldconfig_bin="$candidate"; break; fi
  done
  if [ -n "$ldconfig_bin" ] && cache="$("$ldconfig_bin" -p 2>/dev/null)"; then
    while read -r name _; do
      [ "$name" = libvulkan.so.1 ] && return 0
    done <<<"$cache"
    return 1
  fi
  for candidate in /lib/*-linux-gnu /usr/lib/*-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
    [ -e "$candidate/libvulkan.so.1" ] && return 0
  done
  return 1
}

# Debian packages: the software WebGPU adapter (SwiftShader's Vulkan driver, from chromium-common,
# and the Vulkan loader, from libvulkan1), and the headless browser of the report and viewer tests
# (chromium). Each package is named only when the file it provides is missing.
icd=/usr/lib/chromium/vk_swiftshader_icd.json
pkgs=() missing=()
if [ ! -f "$icd" ]; then pkgs+=(chromium-common); missing+=("$icd"); fi
if ! has_vulkan_loader; then pkgs+=(libvulkan1); missing+=(libvulkan.so.1); fi
# the browser only when asked (scripts/test.sh: `setup.sh --browser`); `./solverlab` does not need it
if [ "$browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then pkgs+=(chromium); missing+=(/usr/bin/chromium); fi

[ "${#pkgs[@]}" -eq 0 ] && exit 0
if [ "$check_only" = 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "solverlab: installing ${missing[*]} (apt-get install ${pkgs[*]}) …" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2
  exit 0
fi
echo "solverlab: missing: ${missing[*]} (Debian packages ${pkgs[*]}: as root, apt-get install ${pkgs[*]}); CPU solvers work without the software GPU, the report and viewer tests need chromium" >&2
[ "$check_only" = 1 ] && exit 1
exit 0
