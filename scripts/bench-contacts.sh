#!/usr/bin/env bash
# The contact benchmark (issue 16): `pyramid` of base 20 and `rain` of 1k and 10k bodies, every CPU
# contact solver and Rapier in one `compare` run, each at its defaults (sleeping on): median ms per
# frame (wall clock), worst and final penetration, contact points and awake bodies at the end.
#   bash scripts/bench-contacts.sh [FRAMES (300)] [OUT (bench-contacts)]
# The three scenes are exported to scene files first (one compare takes each with its own parameters).
# SOLVERS=a,b,… runs only those (default: every CPU contact solver and rapier).
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
frames="${1:-300}"
out="${2:-bench-contacts}"
scenes="$(mktemp -d)"
trap 'rm -rf "$scenes"' EXIT
"$root/solverlab" scenes --export pyramid --param base=20 --out "$scenes/pyramid-20.json" >/dev/null
"$root/solverlab" scenes --export rain --param count=1000 --out "$scenes/rain-1k.json" >/dev/null
"$root/solverlab" scenes --export rain --param count=10000 --out "$scenes/rain-10k.json" >/dev/null
# one name per file, so the table tells the two rains apart
for f in pyramid-20 rain-1k rain-10k; do sed -i "0,/\"name\": \"[^\"]*\"/s//\"name\": \"$f\"/" "$scenes/$f.json"; done
"$root/solverlab" compare \
  --scenes "$scenes/pyramid-20.json,$scenes/rain-1k.json,$scenes/rain-10k.json" \
  --solvers "${SOLVERS:-softstep-cpu,pgs-cpu,si-soft-cpu,gs-cpu,jacobi-cpu,xpbd-cpu,rapier}" \
  --frames "$frames" --out "$out"
