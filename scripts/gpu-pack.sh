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
libs=(libglvnd0 libglx0 libgl1 libegl1 libopengl0 libgles2)
(cd .gpu && { apt-get download "${libs[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get download "${libs[@]}" >/dev/null; }; })
ls .gpu/*.deb | wc -l | awk '{print "gpu-pack: .gpu/ also holds GLVND for NVIDIA'"'"'s Vulkan driver (" $1 " packages)"}'
