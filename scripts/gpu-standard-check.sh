#!/usr/bin/env bash
# Rehearses a GPU host's first device call here, on SwiftShader: builds the bundle, packs .gpu/ with
# scripts/gpu-pack.sh (the shared one, plus GLVND), and runs its standard.sh from a clean environment with no Node on the PATH
# (the GPU host has none), at reduced sizes unless --full: every step must end with exit 0 and a
# result, or with one line saying why not (exit 2) — never a stack trace.
#   bash scripts/gpu-standard-check.sh          # 10k/100k for jacobi-gpu, gs-gpu, xpbd-gpu; 1M for jacobi-gpu
#   bash scripts/gpu-standard-check.sh --full   # the host's own sizes (100k/1M; 10M), as far as this machine holds
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
pack="$root/scripts/gpu-pack.sh"
[ -f "$pack" ] || { echo "gpu-standard-check: $pack not found" >&2; exit 2; }
cd "$root"
npm run build >/dev/null
bash "$pack"
work=$(mktemp -d /tmp/solverlab-gpu-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r .gpu "$work/.gpu"
if [ "${1:-}" != --full ]; then
  sed -i -e 's/--sizes 100000,1000000/--sizes 10000,100000/' -e 's/--sizes 10000000 /--sizes 1000000 /' -e 's/--frames 30/--frames 3/' \
    -e 's/--contacts --frames 200 --sample-every 20/--contacts --frames 2 --scenes rain-10k/' \
    -e 's/--avbd --frames 60 --big-frames 120 --sample-every 20/--avbd --frames 1 --scenes pyramid-100/' "$work/.gpu/standard.sh"
fi
# a PATH of this machine's tools without node, npm, npx or corepack
mkdir -p "$work/bin" "$work/home" "$work/out"
for dir in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
  for f in "$dir"/*; do
    name=$(basename "$f")
    case "$name" in node | nodejs | npm | npx | corepack) continue ;; esac
    [ -e "$work/bin/$name" ] || ln -s "$f" "$work/bin/$name"
  done
done
# run.sh unpacks into /tmp/sl-node and /tmp/sl once: start from none, as a fresh host does
rm -rf /tmp/sl-node /tmp/sl
cd "$work"
env -i PATH="$work/bin" HOME="$work/home" OUT="$work/out" VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json \
  bash -c 'command -v node && { echo "node is on the PATH" >&2; exit 1; }; bash .gpu/standard.sh' | tee "$work/standard.log"
# every step: exit 0, or exit 2 with one line (a refusal); anything else (a crash, a time-out) fails the check
bad=$(grep -E '^   exit [0-9]+ after' "$work/standard.log" | grep -vE '^   exit (0|2) after' || true)
[ -z "$bad" ] || { echo "gpu-standard-check: a step failed: $bad" >&2; exit 1; }
for log in "$work"/out/*.log; do
  if grep -qE '^\s+at |Maximum call stack|heap out of memory|Aborted' "$log"; then echo "gpu-standard-check: $(basename "$log") holds a stack trace or an abort" >&2; exit 1; fi
done
grep -h 'adapter:' "$work"/out/*.log | sort -u | head -3 || true
echo "gpu-standard-check: every step of standard.sh ran or refused cleanly ($(ls "$work/out" | wc -l) files in OUT)"
