/**
 * Scene files: every kind of bad file is refused with one line naming the JSON
 * path of the fault (exit 2, nothing run, nothing written); a built-in scene
 * exported to a file and run from it gives the bit-identical final state (the
 * state hash) of the built-in run; CPU runs are deterministic.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSceneFile } from '../src/model/schema.js';
import { WorldError } from '../src/model/world.js';
import { stateHash } from '../src/metrics/hash.js';
import type { Snapshot } from '../src/solvers/solver.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });
const dir = mkdtempSync(join(tmpdir(), 'solverlab-scenes-'));

const good = () => ({
  gravity: [0, -9.81, 0],
  bodies: [
    { shape: { type: 'sphere', radius: 0.1 }, density: 1000, position: [0, 1, 0], orientation: [0, 0, 0, 1], linearVelocity: [0, 0, 0], angularVelocity: [0, 0, 0] },
    { shape: { type: 'sphere', radius: 0.1 }, mass: 2, fixed: true, position: [0, 2, 0] },
  ],
  constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0.5, 0], anchorB: [0, 1.5, 0] }],
});

// [what is wrong, file text, the JSON path the message must name, words it must contain]
const bad: [string, string, string, RegExp][] = [
  ['malformed JSON', '{ "gravity": [0, -9.81, 0], "bodies": [ }', '(file)', /malformed JSON.*line 1/],
  ['not an object', '[1, 2, 3]', '(top level)', /expected a JSON object/],
  ['missing field', JSON.stringify({ ...good(), gravity: undefined }), 'gravity', /missing/],
  ['missing position', JSON.stringify((() => { const g = good(); delete (g.bodies[0] as Partial<(typeof g.bodies)[0]>).position; return g; })()), 'bodies[0].position', /missing/],
  ['mistyped field', JSON.stringify((() => { const g = good(); (g.bodies[1] as Record<string, unknown>).mass = 'heavy'; return g; })()), 'bodies[1].mass', /finite number/],
  ['mistyped vector', JSON.stringify((() => { const g = good(); (g.constraints[0] as Record<string, unknown>).anchorA = [0, 1]; return g; })()), 'constraints[0].anchorA', /3 numbers/],
  ['unknown key (typo)', JSON.stringify((() => { const g = good(); (g.bodies[0].shape as Record<string, unknown>).raduis = 1; return g; })()), 'bodies[0].shape', /unknown key "raduis"/],
  ['unknown shape', JSON.stringify((() => { const g = good(); (g.bodies[0].shape as Record<string, unknown>).type = 'blob'; return g; })()), 'bodies[0].shape.type', /unknown type "blob" \(expected "sphere" or "box" or "capsule" or "plane"\)/],
  ['body index out of range', JSON.stringify((() => { const g = good(); (g.constraints[0] as Record<string, unknown>).bodyB = 7; return g; })()), 'constraints[0].bodyB', /out of range/],
  ['negative body index', JSON.stringify((() => { const g = good(); g.constraints[0].bodyA = -1; return g; })()), 'constraints[0].bodyA', /≥ 0/],
  ['non-positive mass', JSON.stringify((() => { const g = good(); g.bodies[1].mass = 0; return g; })()), 'bodies[1].mass', /> 0/],
  ['non-positive radius', JSON.stringify((() => { const g = good(); g.bodies[0].shape.radius = -0.1; return g; })()), 'bodies[0].shape.radius', /> 0, got -0.1/],
  ['non-finite number', JSON.stringify(good()).replace('"position":[0,1,0]', '"position":[0,1e999,0]'), 'bodies[0].position[1]', /finite number, got Infinity/],
  ['zero quaternion', JSON.stringify((() => { const g = good(); g.bodies[0].orientation = [0, 0, 0, 0]; return g; })()), 'bodies[0].orientation', /zero quaternion/],
  ['mass and density', JSON.stringify((() => { const g = good(); (g.bodies[0] as Record<string, unknown>).mass = 3; return g; })()), 'bodies[0]', /"mass" or "density", not both/],
  ['box with a zero extent', JSON.stringify((() => { const g = good(); (g.bodies[0] as Record<string, unknown>).shape = { type: 'box', halfExtents: [0.1, 0, 0.1] }; return g; })()), 'bodies[0].shape.halfExtents[1]', /expected a number > 0, got 0/],
  ['crossed hinge limits', JSON.stringify((() => { const g = good(); Object.assign(g.constraints[0], { type: 'hinge', axisA: [0, 0, 1], axisB: [0, 0, 1], lowerAngle: 1, upperAngle: -1 }); return g; })()), 'constraints[0].upperAngle', /upperAngle ≥ lowerAngle \(1\), got -1/],
  ['no mass or density', JSON.stringify((() => { const g = good(); delete (g.bodies[0] as Partial<(typeof g.bodies)[0]>).density; return g; })()), 'bodies[0]', /needs "mass" or "density"/],
];

test('a bad scene file: one line naming the JSON path, exit status 2, nothing run or written', () => {
  for (const [what, text, path, words] of bad) {
    const file = join(dir, 'bad.json');
    writeFileSync(file, text);
    const out = join(dir, `out-${what.replace(/\W+/g, '-')}.json`);
    const r = cli('run', '--scene', file, '--solver', 'jacobi-cpu', '--frames', '5', '--json', out);
    assert.equal(r.status, 2, `${what}: status ${r.status}\n${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `${what}: one line expected, got:\n${r.stderr}`);
    assert.ok(lines[0].startsWith(`solverlab: ${file}: ${path}: `), `${what}: '${lines[0]}' should name ${path}`);
    assert.match(lines[0], words, what);
    assert.equal(r.stdout, '', `${what}: nothing run`);
    assert.ok(!existsSync(out), `${what}: nothing written`);
  }
  const missing = cli('run', '--scene', join(dir, 'nope.json'), '--solver', 'jacobi-cpu');
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /no such file/);
});

test('the library names the same path as the CLI, and accepts the documented example', () => {
  assert.throws(() => parseSceneFile(bad[11][1]), (e: unknown) => e instanceof WorldError && e.path === 'bodies[0].shape.radius');
  const { world } = parseSceneFile(JSON.stringify(good()));
  assert.equal(world.bodies.length, 2);
  assert.equal(world.constraints[0].bodyB, null);
});

test('export → run: the file gives the bit-identical final state of the built-in scene, run after run', () => {
  const file = join(dir, 'necklace.json');
  const params = ['--param', 'chains=3', '--param', 'beads=6'];
  const exported = cli('scenes', '--export', 'necklace', ...params, '--out', file);
  assert.equal(exported.status, 0, exported.stderr);
  const text = readFileSync(file, 'utf8');
  assert.match(text, /"format": "solverlab-scene"/);
  const hash = (r: ReturnType<typeof cli>) => /state hash +([0-9a-f]{16})/.exec(r.stdout)?.[1];
  const run = (...scene: string[]) => cli('run', ...scene, '--solver', 'jacobi-cpu', '--frames', '90', '--quiet');
  const builtIn = run('--scene', 'necklace', ...params);
  const fromFile = run('--scene', file);
  const again = run('--scene', 'necklace', ...params);
  for (const r of [builtIn, fromFile, again]) assert.equal(r.status, 0, r.stderr);
  assert.ok(hash(builtIn), builtIn.stdout);
  assert.equal(hash(fromFile), hash(builtIn), 'the exported file is the same world, to the last bit');
  assert.equal(hash(again), hash(builtIn), 'the CPU solver is deterministic');
  // a file scene takes no --param
  const withParam = cli('run', '--scene', file, '--param', 'beads=3');
  assert.equal(withParam.status, 2);
  assert.match(withParam.stderr, /scene file has no parameters/);
});

test('the state hash sees a one-bit change in any array and nothing else', () => {
  const snap = (): Snapshot => ({
    frame: 0,
    time: 0,
    bodyCount: 2,
    position: Float64Array.from([1, 2, 3, 4, 5, 6]),
    orientation: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1]),
    linearVelocity: Float64Array.from([0.1, 0.2, 0.3, 0, 0, 0]),
    angularVelocity: Float64Array.from([0, 0, 0, 0, 0, 1]),
  });
  const base = stateHash(snap());
  assert.match(base, /^[0-9a-f]{16}$/);
  assert.equal(stateHash({ ...snap(), frame: 9, time: 1 }), base, 'frame and time are not state');
  for (const key of ['position', 'orientation', 'linearVelocity', 'angularVelocity'] as const) {
    const s = snap();
    const bits = new Uint32Array(s[key].buffer);
    bits[2] ^= 1; // lowest mantissa bit of element 1 (little-endian: its low word)
    assert.notEqual(stateHash(s), base, key);
  }
});
