#!/usr/bin/env bash
# One device call's hardware run (packed beside .gpu/ by scripts/gpu-pack.sh as .gpu/hw.sh). On the GPU host,
# from the project root:  bash .gpu/hw.sh [contacts|host]   (results into $OUT: hw.log, machine.txt, results.tgz)
# Unlike standard.sh it unpacks the Vulkan loader and GLVND unconditionally (the device README's advice: a host
# with a loader may still lack GLVND, which NVIDIA's ICD needs), probes the adapter first and tries the driver's
# ICD by name if the loader finds none, orders the steps by what is worth most (necklace 100k/1M, GPU contacts,
# AVBD, necklace 10M) and bounds each so the whole fits one call of under 10 minutes; after every step the
# results so far are packed into $OUT/results.tgz (the device call returns at most 8 files).
# HW_SMALL=1 shrinks every size for a rehearsal on SwiftShader (scripts/gpu-standard-check.sh --hw).
set -u
export NODE_OPTIONS="${NODE_OPTIONS:-} --max-old-space-size=65536"
g=$(cd "$(dirname "$0")" && pwd); out=${OUT:-gpu-out}; mkdir -p "$out"; res=/tmp/hw-res; rm -rf "$res"; mkdir -p "$res"
export PATH="$PATH:/usr/sbin:/sbin"
exec > >(tee "$out/hw.log") 2>&1
small=${HW_SMALL:-0}; [ "$small" = 1 ] && export NODE_OPTIONS=
pack() { tar -C "$res" -czf "$out/results.tgz" . 2>/dev/null; }
sl() { bash "$g/run.sh" "$@"; }
step() { local secs=$1 name=$2; shift 2; echo "== $name (bound ${secs}s): $*"; SECONDS=0
  (set -o pipefail; cd "$res" && timeout -k 5 "$secs" bash "$g/run.sh" "$@" 2>&1 | while IFS= read -r l; do printf '%4ss %s\n' "$SECONDS" "$l"; done >"$res/$name.log"); echo "   exit $? after ${SECONDS}s"
  grep -E 'adapter:|mean .* ms|results written|diverg|refus|Error' "$res/$name.log" | head -n 40; pack; }
if [ "$small" != 1 ]; then
  for f in "$g"/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig 2>/dev/null
  nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f $nv ] && export VK_DRIVER_FILES=$nv
  egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  [ -f $egl ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
fi
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 | head -3; nproc; grep -m1 'model name' /proc/cpuinfo
  ls /usr/local/nvidia/share/vulkan/icd.d/ 2>&1; ldconfig -p | grep -E 'libvulkan|libGLdispatch|libGLX_nvidia' ; } | tee "$out/machine.txt"
probe() { (cd "$res" && timeout -k 5 90 bash "$g/run.sh" bench --sizes 1000 --solvers jacobi-gpu --frames 5 --out "$res/probe.json") >"$res/probe.log" 2>&1; grep -m1 'adapter:' "$res/probe.log"; }
a=$(probe); echo "probe: ${a:-no adapter}"
if [ "$small" != 1 ] && ! echo "$a" | grep -qi nvidia; then
  tail -n 15 "$res/probe.log"
  for icd in /usr/local/nvidia/share/vulkan/icd.d/*.json /usr/share/vulkan/icd.d/nvidia*.json /etc/vulkan/icd.d/nvidia*.json; do
    [ -f "$icd" ] || continue; echo "retry with VK_ICD_FILENAMES=$icd"; unset VK_DRIVER_FILES; export VK_ICD_FILENAMES=$icd
    a=$(probe); echo "probe: ${a:-no adapter}"; echo "$a" | grep -qi nvidia && break
  done
  echo "$a" | grep -qi nvidia || { tail -n 30 "$res/probe.log"; pack; echo "no NVIDIA adapter: stopping"; exit 1; }
fi
pack
if [ "${1:-}" = contacts ]; then
  # the second call of 2026-11-27: the first spent about 60 s a run on the contact benchmark (3 runs in its 190 s bound,
  # nothing written), so here the 100k-body scenes under the two cheapest GPU contact solvers, then the 10k rain
  # under the two the first call did not reach; every log line carries its second (set-up against frames)
  step 190 contacts-big bench --contacts --frames 60 --big-frames 60 --sample-every 30 --scenes rain-100k,brick-wall-110k --solvers jacobi-gpu,softstep-gpu --references none --out "$res/contacts-big"
  step 120 contacts-10k bench --contacts --frames 60 --sample-every 30 --scenes rain-10k --solvers softstep-gpu,avbd-gpu --references none --out "$res/contacts-10k"
elif [ "${1:-}" = host ]; then
  # where the wall clock goes above the stamps (docs/hardware.md, 2026-11-27): the run JSON's host split and call
  # counts, with Dawn's validation on and then off (SOLVERLAB_DAWN_VALIDATION=off: no per-indirect-dispatch check)
  for v in on off; do
    (export SOLVERLAB_DAWN_VALIDATION=$v; step 110 contacts-10k-$v bench --contacts --frames 30 --sample-every 30 --scenes rain-10k --solvers jacobi-gpu,softstep-gpu,avbd-gpu --references none --out "$res/contacts-10k-$v")
    (export SOLVERLAB_DAWN_VALIDATION=$v; step 60 necklace-$v bench --sizes 100000 --solvers jacobi-gpu,gs-gpu,xpbd-gpu --frames 60 --out "$res/necklace-$v.json")
  done
elif [ "$small" = 1 ]; then
  step 120 necklace bench --sizes 1000,10000 --solvers jacobi-gpu,gs-gpu,xpbd-gpu --frames 10 --out "$res/necklace.json"
  step 300 contacts bench --contacts --frames 2 --scenes rain-10k --references none --out "$res/contacts"
  step 300 avbd bench --avbd --frames 1 --scenes pyramid-100 --out "$res/avbd"
  step 120 necklace-10m bench --sizes 100000 --solvers jacobi-gpu --frames 3 --out "$res/necklace-10m.json"
else
  step 110 necklace bench --sizes 100000,1000000 --solvers jacobi-gpu,gs-gpu,xpbd-gpu --frames 60 --out "$res/necklace.json"
  step 190 contacts bench --contacts --frames 120 --big-frames 120 --sample-every 40 --out "$res/contacts"
  step 110 avbd bench --avbd --frames 60 --big-frames 120 --sample-every 40 --scenes brick-wall-110k,necklace-100k --out "$res/avbd"
  step 90 necklace-10m bench --sizes 10000000 --solvers jacobi-gpu --frames 30 --out "$res/necklace-10m.json"
fi
ls -la "$res"; pack; echo "hw: done"
