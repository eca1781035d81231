/**
 * Constraint-graph colouring (src/model/colouring.ts): no two constraints of one
 * colour share a dynamic body, on random graphs and on every built-in scene; the
 * colour count sits between the graph's lower bound (the most constraints on one
 * dynamic body) and greedy's upper bound; colours are balanced.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colourConstraints, colouringConflict, colourOrderedWorld, type ConstraintGraph } from '../src/model/colouring.js';
import { compileWorld } from '../src/model/compiled.js';
import { rigidScenes as scenes } from '../src/scenes/registry.js';
import { resolveParams } from '../src/scenes/scene.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { mulberry32 } from './support/random.js';

/** The most constraints on one dynamic body: they all conflict, so at least this many colours. */
function maxDynamicDegree(g: ConstraintGraph): number {
  const d = new Int32Array(g.bodyCount);
  for (let c = 0; c < g.constraintCount; c++) for (const b of [g.ib0[c], g.ib1[c]]) if (g.inverseMass[b] > 0) d[b]++;
  return Math.max(0, ...d);
}

/** Each check by brute force over all pairs, independent of colouringConflict. */
function assertProper(g: ConstraintGraph, colour: Int32Array, what: string): void {
  const byBody = new Map<number, number[]>();
  for (let c = 0; c < g.constraintCount; c++)
    for (const b of new Set([g.ib0[c], g.ib1[c]])) if (g.inverseMass[b] > 0) byBody.set(b, [...(byBody.get(b) ?? []), c]);
  for (const [b, list] of byBody) {
    const seen = new Set<number>();
    for (const c of list) {
      assert.ok(!seen.has(colour[c]), `${what}: body ${b} has two constraints of colour ${colour[c]}`);
      seen.add(colour[c]);
    }
  }
}

function randomGraph(seed: number, bodies: number, constraints: number, fixedShare: number): ConstraintGraph {
  const rnd = mulberry32(seed);
  const inverseMass = Float64Array.from({ length: bodies }, () => (rnd() < fixedShare ? 0 : 1));
  const ib0 = new Int32Array(constraints), ib1 = new Int32Array(constraints);
  for (let c = 0; c < constraints; c++) {
    ib0[c] = Math.floor(rnd() * bodies);
    do ib1[c] = Math.floor(rnd() * bodies);
    while (ib1[c] === ib0[c]);
  }
  return { constraintCount: constraints, bodyCount: bodies, ib0, ib1, inverseMass };
}

test('colouring is proper on random graphs, within its bounds, and every constraint is in exactly one colour', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const bodies = 5 + (seed * 37) % 200;
    const g = randomGraph(seed, bodies, Math.floor(bodies * (0.5 + (seed % 5))), (seed % 4) * 0.1);
    const col = colourConstraints(g);
    const what = `seed ${seed} (${g.bodyCount} bodies, ${g.constraintCount} constraints)`;
    assertProper(g, col.colour, what);
    assert.equal(colouringConflict(g, col), null, what);
    // each constraint conflicts with at most 2(Δ − 1) others, so greedy needs ≤ 2Δ − 1 colours
    const delta = maxDynamicDegree(g);
    assert.ok(col.colourCount >= delta, `${what}: ${col.colourCount} colours < lower bound ${delta}`);
    assert.ok(col.colourCount <= Math.max(1, 2 * delta - 1), `${what}: ${col.colourCount} colours > greedy bound ${2 * delta - 1}`);
    // order/start partition the constraints by colour
    assert.equal(col.start[col.colourCount], g.constraintCount);
    assert.deepEqual([...col.order].sort((a, b) => a - b), Array.from({ length: g.constraintCount }, (_, i) => i));
    for (let k = 0; k < col.colourCount; k++) {
      assert.equal(col.start[k + 1] - col.start[k], col.sizes[k]);
      for (let t = col.start[k]; t < col.start[k + 1]; t++) assert.equal(col.colour[col.order[t]], k);
    }
    assert.deepEqual(colourConstraints(g).colour, col.colour, `${what}: not deterministic`);
  }
});

test('colouringConflict finds a pair that shares a dynamic body, and ignores a shared fixed body', () => {
  const g: ConstraintGraph = { constraintCount: 2, bodyCount: 3, ib0: Int32Array.of(0, 1), ib1: Int32Array.of(2, 2), inverseMass: Float64Array.of(1, 1, 1) };
  const same = { colourCount: 1, order: Int32Array.of(0, 1), start: Int32Array.of(0, 2), colour: Int32Array.of(0, 0), sizes: [2] };
  assert.deepEqual(colouringConflict(g, same), [0, 1]);
  assert.equal(colouringConflict({ ...g, inverseMass: Float64Array.of(1, 1, 0) }, same), null);
  // and the colouring puts both in one colour when the shared body is fixed (a pinned fan)
  assert.equal(colourConstraints({ ...g, inverseMass: Float64Array.of(1, 1, 0) }).colourCount, 1);
  assert.equal(colourConstraints(g).colourCount, 2);
});

test('every built-in scene is coloured properly; chains take 2 colours, the grid 4, balanced', () => {
  for (const s of scenes) {
    const w = compileWorld(s.build(resolveParams(s, s.name === 'necklace' ? { chains: 50 } : s.name === 'pyramid' ? { base: 5 } : {})));
    if (w.constraintCount === 0) continue; // a contact scene without joints: nothing to colour
    const col = colourConstraints(w);
    assertProper(w, col.colour, s.name);
    const delta = maxDynamicDegree(w);
    // chains (Δ = 2, paths: bipartite) need exactly 2; the grid (Δ = 4, a bipartite line graph) exactly 4
    if (delta >= 2) assert.equal(col.colourCount, delta, `${s.name}: ${col.colourCount} colours, Δ = ${delta}`);
    // no long tail: the smallest colour holds at least 90 % of an even share
    const even = w.constraintCount / col.colourCount;
    assert.ok(Math.min(...col.sizes) >= 0.9 * Math.floor(even), `${s.name}: colour sizes ${col.sizes.join(', ')}`);
  }
});

test('balanced recolouring removes the long tail first fit leaves', () => {
  // a star of 3 spokes around each of many hubs, plus a chain through the hubs: first fit
  // in largest-first order fills colours 0..2 and leaves a small tail; balancing evens it
  const hubs = 300, ib0: number[] = [], ib1: number[] = [];
  let n = hubs;
  for (let h = 0; h < hubs; h++) {
    for (let k = 0; k < 3; k++) (ib0.push(h), ib1.push(n++));
    if (h + 1 < hubs && h % 2 === 0) (ib0.push(h), ib1.push(h + 1));
  }
  const g: ConstraintGraph = { constraintCount: ib0.length, bodyCount: n, ib0: Int32Array.from(ib0), ib1: Int32Array.from(ib1), inverseMass: new Float64Array(n).fill(1) };
  const col = colourConstraints(g);
  assertProper(g, col.colour, 'stars');
  assert.equal(col.colourCount, 4);
  const even = g.constraintCount / col.colourCount;
  assert.ok(Math.min(...col.sizes) >= 0.9 * Math.floor(even), `colour sizes ${col.sizes.join(', ')}`);
  // first fit alone: the 150 hub links (degree 6) take colour 0 first, the spokes 1..3
  const firstFit = colourConstraints(g, { balance: false });
  assertProper(g, firstFit.colour, 'stars, first fit');
  assert.equal(firstFit.colourCount, 4);
  assert.equal(Math.min(...firstFit.sizes), hubs / 2, `first-fit sizes ${firstFit.sizes.join(', ')}`);
});

test('colourOrderedWorld keeps the bodies, permutes the constraints into contiguous colours', () => {
  const { world } = loadRigidScene('joint-grid', { columns: 5, rows: 4 });
  const { world: ordered, colouring } = colourOrderedWorld(world);
  assert.deepEqual(ordered.bodies, world.bodies);
  assert.equal(ordered.constraints.length, world.constraints.length);
  assert.deepEqual(new Set(ordered.constraints), new Set(world.constraints));
  const w = compileWorld(ordered);
  assertProper(w, colouring.colour, 'ordered grid');
  for (let k = 0; k < colouring.colourCount; k++)
    for (let c = colouring.start[k]; c < colouring.start[k + 1]; c++) assert.equal(colouring.colour[c], k);
});
