#!/usr/bin/env bash
# Packs .gpu/ for a GPU host without Node: the shared ../shared/tools/gpu-pack.sh (Node, the bundled CLI
# with dawn.node, the Vulkan loader, run.sh, standard.sh), plus GLVND's libraries. NVIDIA's Vulkan driver
# (its ICD is libGLX_nvidia.so.0) cannot create an instance without GLVND's libGLdispatch: on the H200
# host (2026-11-26) the shared pack alone gave "Could not get 'vkCreateInstance' via
# 'vk_icdGetInstanceProcAddr' for ICD libGLX_nvidia.so.0" and no adapter. run.sh unpacks every .deb in
# .gpu/ on a host without a Vulkan loader, so these go in with it.
# Use, from anywhere:   bash scripts/gpu-pack.sh      then carry .gpu and run:   bash .gpu/standard.sh
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
pack="$root/../shared/tools/gpu-pack.sh"
[ -f "$pack" ] || { echo "gpu-pack: $pack not found (the shared tools sit beside the project)" >&2; exit 2; }
cd "$root"
bash "$pack"
# the GPU contact benchmark (issue 23: bench/gpu-contacts.ts, scripts/bench-gpu-contacts.sh) in the standard run, in
# place of the shared script's contact compare (brick-wall and pyramid, which it covers): rain 10k and 100k,
# brick-wall 110k, pyramid base 100 under every GPU contact solver, softstep-cpu and rapier on the 10k rain; the
# metrics (a CPU collision pass at 110k bodies, about a second a snapshot) on 10 of the 200 frames; the results
# are written after each scene, so a step stopped by its bound keeps the scenes it finished
sed -i '/^if sl solvers/,/^fi$/d' .gpu/standard.sh
sed -i 's|^ls -la "\$out"$|step 240 contacts-bench bench --contacts --frames 200 --sample-every 20 --out "$out/contacts-bench"\n&|' .gpu/standard.sh
grep -q '^step 240 contacts-bench' .gpu/standard.sh || { echo "gpu-pack: could not add the contact benchmark to .gpu/standard.sh" >&2; exit 1; }
# the AVBD benchmark (issue 24: bench/avbd-bench.ts, scripts/bench-avbd.sh): brick-wall 110k and necklace 100k under
# every registered GPU solver that runs them (avbd-gpu once registered), pyramid base 100 under avbd-cpu on the host's
# CPU; 120 frames (60 on the CPU pyramid, about a second a frame there), the metrics on 6 of them
sed -i 's|^ls -la "\$out"$|step 240 avbd-bench bench --avbd --frames 60 --big-frames 120 --sample-every 20 --out "$out/avbd-bench"\n\&|' .gpu/standard.sh
grep -q '^step 240 avbd-bench' .gpu/standard.sh || { echo "gpu-pack: could not add the AVBD benchmark to .gpu/standard.sh" >&2; exit 1; }
libs=(libglvnd0 libglx0 libgl1 libegl1 libopengl0 libgles2)
(cd .gpu && { apt-get download "${libs[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get download "${libs[@]}" >/dev/null; }; })
ls .gpu/*.deb | wc -l | awk '{print "gpu-pack: .gpu/ also holds GLVND for NVIDIA'"'"'s Vulkan driver (" $1 " packages)"}'
# the one-call hardware run (scripts/gpu-hw.sh): loader and GLVND always unpacked, the adapter probed first, the
# steps bounded to fit one device call; carry .gpu and run:   bash .gpu/hw.sh
cp "$root/scripts/gpu-hw.sh" .gpu/hw.sh
