#!/usr/bin/env bash
# The GPU contact benchmark (issue 23): rain 10k and 100k, brick-wall 110k (50 × 100 × 22) and pyramid base 100
# under every GPU solver that takes contacts (the registry's: a new one joins without an edit), softstep-cpu and
# rapier on the 10k rain in the same run, sleeping off. Per run: ms per frame (mean and median), split into
# collision and solve (GPU timestamps; the clock is named), colours (most used, overflow set), contact points,
# worst penetration. Writes OUT/summary.md and summary.csv beside compare's results.json, results.csv, report.html.
#   bash scripts/bench-gpu-contacts.sh [FRAMES (10)] [OUT (bench-contacts-gpu)]
# BIG_FRAMES=N: frames on the 100k-body scenes (default FRAMES; a few on SwiftShader, where one takes 20-60 s).
# SOLVERS=a,b: only these GPU solvers; REFERENCES=a,b|none: the CPU solvers on the 10k rain; SCENES=a,b: some scenes
# (rain-10k, rain-100k, brick-wall-110k, pyramid-100). SL: the solverlab command (default this checkout's; on a
# GPU host without Node, SL="bash .gpu/run.sh", as .gpu/standard.sh does).
# On a lent GPU:  bash scripts/bench-gpu-contacts.sh 300      On SwiftShader:  BIG_FRAMES=3 bash scripts/bench-gpu-contacts.sh 60
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
frames="${1:-10}"
out="${2:-bench-contacts-gpu}"
read -r -a sl <<<"${SL:-$root/solverlab}"
args=(bench --contacts --frames "$frames" --big-frames "${BIG_FRAMES:-$frames}" --out "$out")
[ -n "${SOLVERS:-}" ] && args+=(--solvers "$SOLVERS")
[ -n "${REFERENCES:-}" ] && args+=(--references "$REFERENCES")
[ -n "${SCENES:-}" ] && args+=(--scenes "$SCENES")
exec "${sl[@]}" "${args[@]}"
