#!/usr/bin/env bash
# The AVBD benchmark (issue 24; bench/avbd-bench.ts): brick-wall 110k (50 × 100 × 22) and necklace 100k (2,500 × 40)
# under every registered GPU solver that runs them (avbd-gpu joins when it is registered; until then the run says
# it was not found), and pyramid base 100 on the CPU path under avbd-cpu; sleeping off. Per run: ms per frame
# (mean and median, GPU timestamps where the adapter has them), iterations × substeps, worst violation, worst
# penetration. Writes OUT/summary.md and summary.csv beside compare's results.json, results.csv, report.html.
#   bash scripts/bench-avbd.sh [FRAMES (10)] [OUT (bench-avbd)]
# BIG_FRAMES=N: frames on the 100k-body scenes (default FRAMES; on SwiftShader a 110k-brick frame takes minutes:
# 1-3 there). SOLVERS=a,b: only these; SCENES=a,b: some of brick-wall-110k, necklace-100k, pyramid-100.
# SL: the solverlab command (default this checkout's; on a GPU host, SL="bash .gpu/run.sh", as .gpu/standard.sh does).
# On a lent GPU:  bash scripts/bench-avbd.sh 120      On SwiftShader:  BIG_FRAMES=1 bash scripts/bench-avbd.sh 2
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
frames="${1:-10}"
out="${2:-bench-avbd}"
read -r -a sl <<<"${SL:-$root/solverlab}"
args=(bench --avbd --frames "$frames" --big-frames "${BIG_FRAMES:-$frames}" --out "$out")
[ -n "${SOLVERS:-}" ] && args+=(--solvers "$SOLVERS")
[ -n "${SCENES:-}" ] && args+=(--scenes "$SCENES")
exec "${sl[@]}" "${args[@]}"
