#!/usr/bin/env bash
# Idempotent set-up for a fresh clone: Node packages, the software GPU adapter, and with
# --browser the headless Chromium of the report tests.
# Sourced by ./solverlab and scripts/test.sh; prints only what it does.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$major" -lt 20 ]; then
  echo "solverlab: Node.js 20 or newer is needed (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 2
fi

# Node packages: install when missing or when package-lock.json changed since the last install
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "solverlab: installing Node packages (npm ci) …" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

# Debian packages: the software WebGPU adapter (SwiftShader's Vulkan driver, from chromium-common,
# and the Vulkan loader), and the headless browser of the report and viewer tests (chromium)
icd=/usr/lib/chromium/vk_swiftshader_icd.json
pkgs=()
if [ ! -f "$icd" ] || ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1'; then
  pkgs+=(chromium-common libvulkan1)
fi
# the browser only when asked (scripts/test.sh: `setup.sh --browser`); `./solverlab` does not need it
if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
  pkgs+=(chromium)
fi
if [ "${#pkgs[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "solverlab: installing the software GPU and headless browser (apt-get install ${pkgs[*]}) …" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2
  else
    echo "solverlab: missing Debian packages; as root run: apt-get install ${pkgs[*]} (CPU solvers work without the software GPU; the report tests need chromium)" >&2
  fi
fi
