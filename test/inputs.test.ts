/**
 * Bad input (issue 22, item 3): each is one line on stderr naming the field (a scene file's name
 * first, as its schema errors give it), exit status 2, and nothing written — checked by spawning the
 * command line. No message prints a range ending in "Infinity", and each blames the field to change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rangeText, rangeFault, brokenBound } from '../src/model/ranges.js';
import { checkRanges, estimateRunRecords, checkRunRecords } from '../src/model/limits.js';
import { InputError } from '../src/model/input-error.js';
import { validateWorld, WorldError, type WorldDesc } from '../src/model/world.js';
import { scenes } from '../src/scenes/registry.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });
const dir = mkdtempSync(join(tmpdir(), 'solverlab-inputs-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const ground = { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] };
const ball = (extra: object = {}) => ({ shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0, 1, 0], ...extra });
/** A scene file of the ground and `bodies`, written to DIR/name. */
function sceneFile(name: string, bodies: object[], top: object = {}): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ gravity: [0, -9.81, 0], bodies: [ground, ...bodies], constraints: [], ...top }));
  return file;
}

/** Runs the command with --json OUT and checks the refusal: exit 2, one line matching `field`, no Infinity, OUT not written. */
function refused(args: string[], field: RegExp, fileName?: string): string {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}`);
  // run: its JSON record; compare: its folder
  const r = cli(...args, ...(args[0] === 'compare' && !args.includes('--out') ? ['--out', out] : args[0] === 'run' ? ['--json', out + '.json'] : []), '--quiet');
  assert.equal(r.status, 2, `${args.join(' ')}: status ${r.status}\n${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^solverlab: /);
  assert.match(lines[0], field);
  // (a value given or computed may be infinite; a bound of a range may not)
  assert.doesNotMatch(lines[0], /(\.\.|to|≤|,) -?Infinity|Infinity\]/, `no range ending in Infinity: ${lines[0]}`);
  if (fileName) assert.ok(lines[0].includes(`${fileName}: `), `names the file: ${lines[0]}`);
  assert.ok(!existsSync(out) && !existsSync(out + '.json'), 'nothing written');
  return lines[0];
}

test('scene files: huge velocity, gravity and spin, sizes outside the contact range, μ_s < μ_d, friction 1e300, no bodies: one line naming the field', () => {
  const cases: [string, object[], object, RegExp][] = [
    ['fast.json', [ball({ linearVelocity: [1e300, 0, 0] })], {}, /bodies\[1\]\.linearVelocity: at 1e300 m\/s/],
    ['fast2.json', [ball({ linearVelocity: [0, 0, -1e40] })], {}, /bodies\[1\]\.linearVelocity: /],
    ['heavy.json', [ball()], { gravity: [0, -1e300, 0] }, /: gravity: 1e300 m\/s²/],
    ['sideways.json', [ball()], { gravity: [1e200, 0, 0] }, /: gravity: /],
    ['spin.json', [ball({ angularVelocity: [1e300, 0, 0] })], {}, /bodies\[1\]\.angularVelocity: /],
    ['dust.json', [{ shape: { type: 'sphere', radius: 1e-30 }, density: 1000, position: [0, 1, 0] }], {}, /bodies\[1\]\.shape\.radius: .*below the 0\.01 m to 10 m the contact code supports/],
    ['grain.json', [{ shape: { type: 'box', halfExtents: [1e-4, 1e-4, 1e-4] }, density: 1000, position: [0, 1e-4, 0] }], {}, /bodies\[1\]\.shape\.halfExtents: .*0\.01 m to 10 m/],
    ['needle.json', [{ shape: { type: 'capsule', radius: 1e-3, halfHeight: 0.5 }, density: 1000, position: [0, 1, 0] }], {}, /bodies\[1\]\.shape\.\w+: .*0\.01 m to 10 m/],
    ['mu.json', [ball({ staticFriction: 0.2, dynamicFriction: 0.5 })], {}, /bodies\[1\]\.staticFriction: expected staticFriction ≥ dynamicFriction/],
    ['mu2.json', [ball({ friction: 0.3, dynamicFriction: 0.5 })], {}, /bodies\[1\]\.dynamicFriction: expected staticFriction ≥ dynamicFriction/],
    ['sticky.json', [ball({ friction: 1e300 })], {}, /bodies\[1\]\.friction: expected a friction coefficient in \[0, 100\], got 1e\+?300/],
    ['sticky2.json', [ball({ staticFriction: 1e9 })], {}, /bodies\[1\]\.staticFriction: expected a friction coefficient in \[0, 100\]/],
    // halfExtents 1e200 was blamed on `density` (the mass it gave was infinite): the shape is at fault
    ['slab.json', [{ shape: { type: 'box', halfExtents: [1e200, 1e200, 1e200] }, density: 1000, position: [0, 1, 0] }], { collisions: false }, /bodies\[1\]\.shape\.halfExtents: /],
    ['beam.json', [{ shape: { type: 'box', halfExtents: [1e200, 1, 1] }, density: 1000, position: [0, 1, 0] }], { collisions: false }, /bodies\[1\]\.shape\.halfExtents: /],
  ];
  for (const [name, bodies, top, field] of cases) {
    const file = sceneFile(name, bodies, top);
    refused(['run', '--scene', file, '--solver', 'pgs-cpu', '--frames', '5'], field, file);
  }
  // nothing to simulate: no bodies, or every body fixed (exit 0 and a table of zeros before)
  const empty = join(dir, 'empty.json');
  writeFileSync(empty, JSON.stringify({ gravity: [0, -9.81, 0], bodies: [], constraints: [] }));
  refused(['run', '--scene', empty, '--solver', 'pgs-cpu'], /bodies: a scene needs at least one body/, empty);
  const still = sceneFile('still.json', [{ ...ball(), fixed: true }]);
  refused(['run', '--scene', still, '--solver', 'pgs-cpu'], /bodies: every body is fixed \(all 2\): nothing can move/, still);
  // a particle system's file: its velocity named with the file
  const exported = cli('scenes', '--export', 'bead-on-wire');
  const particles = JSON.parse(exported.stdout);
  particles.particles[0].velocity = particles.particles[0].position.map(() => 1e300);
  const bead = join(dir, 'bead.json');
  writeFileSync(bead, JSON.stringify(particles));
  refused(['run', '--scene', bead], /particles\[0\]\.velocity: /, bead);
  // a density of its own: still the density's fault (the shape's volume is fine)
  const feather = sceneFile('feather.json', [ball({ density: 1e-320 })], { collisions: false });
  refused(['run', '--scene', feather, '--solver', 'pgs-cpu'], /bodies\[1\]\.density: /, feather);
});

test('options and scene parameters outside their ranges: one line naming the flag or parameter', () => {
  refused(['run', '--scene', 'single-box', '--solver', 'pgs-cpu', '--beta', '50'], /--beta must be ≤ 2, got 50/);
  refused(['run', '--scene', 'pendulum', '--solver', 'jacobi-cpu', '--beta', '2.5'], /--beta must be ≤ 2/);
  refused(['run', '--scene', 'single-box', '--solver', 'pgs-cpu', '--iterations', '0'], /--iterations must be ≥ 1, got 0/);
  refused(['compare', '--scenes', 'single-box', '--solvers', 'pgs-cpu:iterations=0'], /iterations must be ≥ 1, got 0/);
  // parameters that build nonsense: each names the parameter to change
  refused(['run', '--scene', 'friction-ramp', '--param', 'distance=0.1', '--solver', 'pgs-cpu'], /scene 'friction-ramp': parameter 'distance' must be ≥ size = 0\.5 m, got 0\.1/);
  refused(['run', '--scene', 'vertical-stack', '--param', 'offset=5', '--solver', 'pgs-cpu'], /scene 'vertical-stack': parameter 'offset' must be below size\/2/);
  refused(['run', '--scene', 'vertical-stack', '--param', 'offset=0.3', '--param', 'size=0.5', '--solver', 'pgs-cpu'], /parameter 'offset'/);
  refused(['run', '--scene', 'pyramid', '--param', 'gap=2', '--solver', 'pgs-cpu'], /parameter 'gap' must be below 2·size/);
  refused(['run', '--scene', 'single-box', '--param', 'size=1e-4', '--solver', 'pgs-cpu'], /parameter 'size' must be ≥ 0\.005, got 0\.0001 \(the contact code supports bodies of 1 cm to 10 m\)/);
  refused(['run', '--scene', 'rain', '--param', 'size=0.01', '--solver', 'pgs-cpu'], /parameter 'size' must be ≥ 0\.025/);
  refused(['run', '--scene', 'pyramid', '--param', 'friction=1e300', '--solver', 'pgs-cpu'], /parameter 'friction' must be ≤ 100/);
  refused(['run', '--scene', 'rope-swing', '--param', 'halfHeight=0', '--solver', 'xpbd-cpu'], /parameter 'halfHeight' must be > 0/);
  // a frame far too long: the step is blamed, not the ordinary gravity it multiplies
  refused(['run', '--scene', 'single-box', '--solver', 'pgs-cpu', '--dt', '1e300'], /: dt: a frame of 1e300 s is too long for this scene/);
  // particle systems: the same class (a velocity or gravity the first frame cannot carry)
  refused(['run', '--scene', 'bead-on-wire', '--param', 'gravity=1e300'], /forces\[0\]\.g: 1e300 m\/s² gives particle 0/);
  // a built-in scene's velocity: the scene and the parameter given are named before the field
  refused(['run', '--scene', 'rolling', '--param', 'speed=1e300', '--solver', 'pgs-cpu'], /scene 'rolling' with speed=1e\+?300: bodies\[1\]\.linearVelocity: /);
});

test('--frames beyond what the series, timings and JSON record can hold: refused with the figure before anything runs', () => {
  const heap = refused(['run', '--scene', 'single-box', '--solver', 'pgs-cpu', '--frames', '1e9'], /--frames 1,000,000,000 at --sample-every 1 keeps a series and timings of about \d+ GB/);
  assert.match(heap, /of JS heap this Node process has left/);
  refused(['run', '--scene', 'single-box', '--solver', 'pgs-cpu', '--frames', '5000000'], /makes a JSON record of about [\d,]+ characters, beyond the 536,870,888 of one JavaScript string/);
  refused(['compare', '--scenes', 'single-box,rolling', '--solvers', 'pgs-cpu,xpbd-cpu', '--frames', '1000000', '--out', join(dir, 'cmp')], /over 4 runs/);
  assert.ok(!existsSync(join(dir, 'cmp')));
  const bench = cli('bench', '--frames', '1e9', '--out', join(dir, 'bench.json'));
  assert.equal(bench.status, 2, bench.stderr);
  assert.match(bench.stderr.trim(), /^solverlab: bench: --frames 1,000,000,000 keeps a series and timings of about \d+ GB.*: fewer frames$/);
  assert.ok(!existsSync(join(dir, 'bench.json')));
});

test('ranges read the same everywhere and never end in Infinity', () => {
  assert.equal(rangeText({ min: 0, max: Infinity }), '≥ 0');
  assert.equal(rangeText({ min: -Infinity, max: 2 }), '≤ 2');
  assert.equal(rangeText({ min: 0, max: 2 }), 'in [0, 2]');
  assert.equal(rangeText({ min: 0, minExclusive: true }), '> 0');
  assert.equal(brokenBound(50, { min: 0, max: 2 }), '≤ 2');
  assert.equal(brokenBound(1, { min: 0, max: 2 }), null);
  assert.equal(rangeFault(1e300, { min: 0, max: 100 }), 'expected a number in [0, 100], got 1e300');
  assert.equal(rangeFault(Infinity, { min: 0 }), 'expected a finite number ≥ 0, got Infinity');
  // every built-in scene's parameter ranges as --help and refusals show them: no Infinity, min ≤ default ≤ max
  for (const s of scenes)
    for (const [k, p] of Object.entries(s.params)) {
      assert.doesNotMatch(rangeText(p), /Infinity/, `${s.name}.${k}`);
      assert.equal(rangeFault(p.default, p), null, `${s.name}.${k}: its default ${p.default} is outside its own range ${rangeText(p)}`);
    }
});

test('library: checkRanges and validateWorld name the field; the record estimate grows with frames and samples', () => {
  const world = (bodies: object[], extra: object = {}) => ({ gravity: [0, -9.81, 0], bodies: [ground, ...bodies], constraints: [], ...extra }) as unknown as WorldDesc;
  assert.throws(() => validateWorld(world([ball({ staticFriction: 0.1, dynamicFriction: 0.4 })])), (e: Error) => e instanceof WorldError && e.path === 'bodies[1].staticFriction');
  assert.throws(() => validateWorld({ gravity: [0, -9.81, 0], bodies: [], constraints: [] }), (e: Error) => e instanceof WorldError && e.path === 'bodies');
  const opts = { dt: 1 / 60, substeps: 1 };
  assert.throws(() => checkRanges(world([ball({ linearVelocity: [1e300, 0, 0] })]), 'pgs-cpu', opts), (e: Error) => e instanceof InputError && /^bodies\[1\]\.linearVelocity/.test(e.message));
  // f32 (a GPU solver, Rapier) carries less than f64: 1e12 m/s moves a body 1.7e10 m a frame, where f32's spacing is 2048 m
  assert.throws(() => checkRanges(world([ball({ linearVelocity: [1e12, 0, 0] })], { collisions: false }), 'jacobi-gpu', opts), /bodies\[1\]\.linearVelocity/);
  assert.deepEqual(checkRanges(world([ball({ linearVelocity: [1e12, 0, 0] })], { collisions: false }), 'jacobi-cpu', opts), []);
  // sizes above the contact range: a warning, naming the field (a result is not known to be wrong)
  const warnings = checkRanges(world([{ shape: { type: 'box', halfExtents: [20, 20, 20] }, density: 1000, position: [0, 20, 0] }]), 'pgs-cpu', { ...opts, where: 'big.json' });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^big\.json: bodies\[1\]\.shape\.halfExtents: the body is 40 m across at its thinnest, beyond the 0\.01 m to 10 m/);
  // the default scenes pass: nothing refused
  const small = estimateRunRecords({ frames: 600, sampleEvery: 1 });
  const sparse = estimateRunRecords({ frames: 600, sampleEvery: 10 });
  assert.ok(sparse.heap < small.heap && sparse.samples === 61);
  assert.throws(() => checkRunRecords('x', { frames: 1e6, sampleEvery: 1 }, { heap: 1e8 }), /about 252 MB/);
  assert.doesNotThrow(() => checkRunRecords('x', { frames: 600, sampleEvery: 1 }, { heap: 1e8 }));
});

test('defaults that work (item 5): run picks a solver that runs the scene; Rapier says it ignores μ_s; compare --param SCENE.k=v; the JSON lists only the options read', async () => {
  // no --solver on a contact scene: it runs (under softstep-cpu), where the default jacobi-gpu refused it with exit 2
  const plain = cli('run', '--scene', 'single-box', '--frames', '3', '--quiet');
  assert.equal(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /solver\s+softstep-cpu/);
  // Rapier takes μ_d only: said at run time where a body sets μ_s ≠ μ_d; not said for a solver that reads both
  const file = sceneFile('held.json', [{ shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0], staticFriction: 0.8, dynamicFriction: 0.4 }]);
  const rapier = cli('run', '--scene', file, '--solver', 'rapier', '--frames', '2', '--quiet');
  assert.equal(rapier.status, 0, rapier.stderr);
  assert.match(rapier.stderr, /^solverlab: note: rapier takes one friction coefficient per body, μ_d: staticFriction \(μ_s\) is ignored where it differs \(bodies\[1\]: μ_s = 0\.8, μ_d = 0\.4\)/m);
  const pgs = cli('run', '--scene', file, '--solver', 'pgs-cpu', '--frames', '2', '--quiet');
  assert.doesNotMatch(pgs.stderr, /friction/);
  // the JSON record's options: only those the solver reads (softstep-cpu reads no β; jacobi-cpu does)
  const soft = JSON.parse(cli('run', '--scene', 'single-box', '--solver', 'softstep-cpu', '--frames', '2', '--quiet', '--json', '-').stdout);
  assert.equal(soft.options.beta, undefined);
  assert.equal(soft.options.contactHertz, 30);
  const jacobi = JSON.parse(cli('run', '--scene', 'single-box', '--solver', 'jacobi-cpu', '--frames', '2', '--quiet', '--json', '-').stdout);
  assert.equal(jacobi.options.beta, 0.2);
  assert.equal(jacobi.options.contactHertz, undefined);
  // compare --param SCENE.k=v goes to that scene alone, over a shared k=v
  const { paramsPerScene } = await import('../src/bench/compare.js');
  const per = paramsPerScene(['domino', 'rain', 'confined'], { count: 7, 'domino.count': 50 });
  assert.deepEqual(per.get('domino'), { count: 50 });
  assert.deepEqual(per.get('rain'), { count: 7 });
  assert.throws(() => paramsPerScene(['domino'], { 'rain.count': 5 }), /--param rain\.count: 'rain' is not one of the chosen scenes/);
  assert.throws(() => paramsPerScene(['domino'], { 'domino.radius': 5 }), /scene 'domino' has no parameter 'radius'/);
  refused(['compare', '--scenes', 'domino', '--solvers', 'pgs-cpu', '--param', 'rain.count=5'], /--param rain\.count: 'rain' is not one of the chosen scenes \(domino\)/);
});
