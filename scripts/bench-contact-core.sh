#!/usr/bin/env bash
# The contact core's A/B (docs/benchmarks.md, issue 21): each case run on a BASE clone (main before a
# change, set up with its own ./solverlab) and on this one, alternating, wall clock; prints median and
# mean ms per frame, worst violation and penetration per run.
#   BASE=/path/to/other/clone bash scripts/bench-contact-core.sh [pyr|rain|neck|big|all]
# "big" also runs Box3D's large_pyramid when BOX3D=/path/to/its/benchmark binary is given.
# Needs python3 (it reads the runs' JSON records).
set -u
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
: "${BASE:?set BASE to the clone to compare against}"
out="$(mktemp -d)"; trap 'rm -rf "$out"' EXIT
one() { # tag dir name args...
  local tag=$1 dir=$2 name=$3; shift 3
  (cd $dir && ./solverlab run "$@" --json $out/$name.$tag.json --quiet >/dev/null 2>$out/$name.$tag.err) || echo "FAILED $tag $name: $(tail -1 $out/$name.$tag.err)"
  python3 - "$out/$name.$tag.json" "$tag" "$name" <<'PY'
import json,sys
try: d=json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[3], sys.argv[2], 'no result'); sys.exit()
t=d['timing']; ms=[x for x in t['msPerFrame'] if x is not None]
pen=(d.get('contacts') or {}).get('worstMaxPenetration')
warm = ms[30:] or ms  # the mean after frame 30: past V8's warm-up of the first frames
print(f"{sys.argv[3]:30s} {sys.argv[2]:4s} median {t['medianMs']:8.3f} mean {sum(ms)/len(ms):8.3f} mean(30-) {sum(warm)/len(warm):8.3f} ms  worstC {d['violation']['worstMax']:.3g}  worstPen {pen if pen is None else round(pen*1000,2)} mm", flush=True)
PY
}
ab() { local name=$1; shift; for rep in 1 2; do one base "$BASE" $name "$@"; one new "$root" $name "$@"; done; }
case "${1:-all}" in
pyr|all)
for s in softstep-cpu pgs-cpu si-soft-cpu gs-cpu xpbd-cpu; do ab pyr20-$s --scene pyramid --param base=20 --sleep 0 --frames 300 --solver $s; done
ab pyr20-pgs-it10-sub1 --scene pyramid --param base=20 --sleep 0 --frames 300 --solver pgs-cpu --iterations 10 --substeps 1
ab pyr20-rapier-it4 --scene pyramid --param base=20 --sleep 0 --frames 300 --solver rapier --iterations 4
;;&
rain|all)
for s in softstep-cpu pgs-cpu si-soft-cpu gs-cpu xpbd-cpu rapier; do ab rain10k-$s --scene rain --param count=10000 --frames 120 --solver $s; done
;;&
neck|all)
ab neck10k-xpbd --scene necklace --param chains=250 --frames 600 --solver xpbd-cpu
ab neck10k-rapier --scene necklace --param chains=250 --frames 600 --solver rapier
ab neck10k-jacobi --scene necklace --param chains=250 --frames 120 --solver jacobi-cpu
;;&
big|all)
for rep in 1 2; do
one base "$BASE" pyr100-softstep --scene pyramid --param base=100 --sleep 0 --frames 180 --solver softstep-cpu
one new "$root" pyr100-softstep --scene pyramid --param base=100 --sleep 0 --frames 180 --solver softstep-cpu
one new "$root" pyr100-rapier-it4 --scene pyramid --param base=100 --sleep 0 --iterations 4 --frames 180 --solver rapier
done
[ -n "${BOX3D:-}" ] && (cd "$out" && "$BOX3D" -b=large_pyramid -t=1 -r=3 2>&1 | tail -6)
;;
esac
