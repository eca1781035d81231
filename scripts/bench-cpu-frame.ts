/**
 * One solver on the rain, stepped frame by frame in this process, timed by process CPU time (user +
 * system, process.cpuUsage): what docs/benchmarks.md's xpbd-cpu / softstep-cpu ratios use, since wall
 * time on a shared VM counts other work. Prints the mean and median ms per frame and a hash of the
 * final positions and orientations (equal hashes: the same state to the bit).
 *   node --import tsx scripts/bench-cpu-frame.ts SOLVER COUNT FRAMES [SLEEP=1]
 * Alternate two solvers (or two clones) run by run to compare them.
 */
import { createHash } from 'node:crypto';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';

const [id, count, frames, sleep = '1'] = process.argv.slice(2);
const world = findRigidScene('rain')!.build({ count: Number(count) });
const info = findSolver(id);
if (!info) throw new Error(`no solver ${id}`);
const solver = await info.create(world, resolveOptions(info, { sleep: Number(sleep) }, world));
const ms: number[] = [];
for (let f = 0; f < Number(frames); f++) {
  const u0 = process.cpuUsage();
  await solver.step(1);
  const u = process.cpuUsage(u0);
  ms.push((u.user + u.system) / 1000);
}
const s = await solver.snapshot();
const hash = createHash('sha256');
for (const a of [s.position, s.orientation]) hash.update(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
const sorted = [...ms].sort((a, b) => a - b);
const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
console.log(`${id} rain ${count} frames ${frames} sleep ${sleep}: mean ${mean.toFixed(1)} median ${sorted[sorted.length >> 1].toFixed(1)} ms CPU, state ${hash.digest('hex').slice(0, 12)}`);
