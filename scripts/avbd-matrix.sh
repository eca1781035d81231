#!/usr/bin/env bash
# The compare matrix of issue 24 (AVBD): every registered solver (`solverlab solvers`: CPU and GPU, Rapier
# and the particle solvers included, so a solver that refuses a scene shows as refused with its reason) on
# the AVBD paper's test scenes, in one `compare`: mass-ratio-pendulum (50,000 : 1, its defaults) for 600 frames of
# 1/60 s (the issue's 10 s), vertical-stack, pyramid, card-house, joint-grid and necklace for 240 (4 s: a second to
# settle, three to stand still or drift), sleeping off. Writes OUT/results.json, results.csv, report.html (its Matrix section first: holds / stretches /
# drifts / diverges / refused per solver and scene, bench/holds.ts) and a picture of that matrix.
#   bash scripts/avbd-matrix.sh [OUT (avbd-matrix)]        the picture: docs/avbd-matrix.png (PICTURE=FILE for another)
# Sizes, small enough for SwiftShader and a 2-core machine (GPU solvers on SwiftShader):
#   vertical-stack 10 boxes · pyramid base 6 (21 boxes) · card-house 2 levels · joint-grid 6 × 6 · necklace 2 chains × 10 beads
# FRAMES=N: another frame count for the five (the pendulum keeps 600); SOLVERS=a,b: a subset (default every registered solver).
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
out="$(realpath -m "${1:-avbd-matrix}")"
sl="$root/solverlab"
# the registry's solvers, as `solverlab solvers` lists them (one line each: id, [cpu] or [gpu], description)
solvers="${SOLVERS:-$("$sl" solvers | awk '$2 == "[cpu]" || $2 == "[gpu]" { print $1 }' | paste -sd, -)}"
[ -n "$solvers" ] || { echo "avbd-matrix: no solver listed by '$sl solvers'" >&2; exit 1; }
"$sl" compare \
  --scenes mass-ratio-pendulum,vertical-stack,pyramid,card-house,joint-grid,necklace \
  --solvers "$solvers" --frames "${FRAMES:-240}" --scene-frames mass-ratio-pendulum=600 --sleep 0 \
  --param vertical-stack.boxes=10 --param pyramid.base=6 --param card-house.levels=2 \
  --param joint-grid.columns=6 --param joint-grid.rows=6 --param necklace.chains=2 --param necklace.beads=10 \
  --out "$out"
picture="$(realpath -m "${PICTURE:-$root/docs/avbd-matrix.png}")"
(cd "$root" && node --import tsx scripts/report-picture.ts "$out/report.html" "$picture")
