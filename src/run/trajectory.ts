/**
 * Trajectories out (`run --trajectory FILE [--trajectory-every K]`): the state of every body —
 * position, orientation (unit quaternion x y z w), linear and angular velocity, in the world frame,
 * SI units — at frames 0, K, 2K, … and the last frame, as the run goes.
 *
 *   FILE.csv   a header line, then one row per body per sample:
 *              frame,t,body,x,y,z,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz
 *   FILE.json  { format, scene, solver, dt, every, bodies, samples: [ { frame, t, position: [[x,y,z] …],
 *              orientation: [[qx,qy,qz,qw] …], linearVelocity: [[vx,vy,vz] …], angularVelocity: [[wx,wy,wz] …] } … ] }
 *
 * Invariants:
 *   - streamed: each sample is written when it is taken (in chunks), never the whole run held in memory;
 *   - exact: every number is the shortest text that reads back as the same f64 (−0 kept), so a sample
 *     read back gives the same stateHash as the solver's snapshot;
 *   - whole or nothing: written to FILE.<pid>.tmp and renamed into place at close(); abort() (an error,
 *     a refusal) removes it, and so does a SIGINT or SIGTERM (run/temp-files.ts, cli/interrupt.ts). A run that diverged closes it with the samples before the divergence
 *     (a state that is not finite is never written: the divergence watch sees each snapshot first).
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { extname } from 'node:path';
import type { Snapshot } from '../model/snapshot.js';
import { tempFor, tempDone } from './temp-files.js';

export type TrajectoryFormat = 'csv' | 'json';

export const TRAJECTORY_CSV_HEADER = 'frame,t,body,x,y,z,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz';

/** The format of FILE by its extension (.csv or .json, any case), or null. */
export function trajectoryFormat(path: string): TrajectoryFormat | null {
  const ext = extname(path).toLowerCase();
  return ext === '.csv' ? 'csv' : ext === '.json' ? 'json' : null;
}

/** Shortest round-trip text of an f64, −0 kept (String(−0) is "0"). */
const num = (x: number) => (Object.is(x, -0) ? '-0' : String(x));

/** Rows per write: a sample of a large scene goes out in pieces. */
const ROWS_PER_CHUNK = 4096;

export interface TrajectoryMeta {
  scene: string;
  solver: string;
  /** the frame's time step (s) */
  dt: number;
  every: number;
}

export class TrajectoryWriter {
  private readonly fd: number;
  private readonly tmp: string;
  private samples = 0;
  private closed = false;

  constructor(
    readonly path: string,
    readonly format: TrajectoryFormat,
    private readonly meta: TrajectoryMeta,
  ) {
    this.tmp = tempFor(path); // listed, so that a signal removes it (run/temp-files.ts)
    this.fd = openSync(this.tmp, 'w');
    if (format === 'csv') writeSync(this.fd, TRAJECTORY_CSV_HEADER + '\n');
  }

  /** Appends one sample: every body of the snapshot. */
  write(s: Snapshot): void {
    if (this.closed) throw new Error('trajectory already closed');
    if (!Number.isFinite(s.time)) throw new Error(`trajectory: time of frame ${s.frame} is not finite`);
    if (this.format === 'csv') this.writeCsv(s);
    else this.writeJson(s);
    this.samples++;
  }

  private writeCsv(s: Snapshot): void {
    const { position: p, orientation: q, linearVelocity: v, angularVelocity: w } = s;
    const head = `${s.frame},${num(s.time)},`;
    let chunk = '';
    for (let i = 0; i < s.bodyCount; i++) {
      const a = 3 * i, b = 4 * i;
      chunk +=
        `${head}${i},${num(p[a])},${num(p[a + 1])},${num(p[a + 2])},` +
        `${num(q[b])},${num(q[b + 1])},${num(q[b + 2])},${num(q[b + 3])},` +
        `${num(v[a])},${num(v[a + 1])},${num(v[a + 2])},${num(w[a])},${num(w[a + 1])},${num(w[a + 2])}\n`;
      if ((i + 1) % ROWS_PER_CHUNK === 0) {
        writeSync(this.fd, chunk);
        chunk = '';
      }
    }
    if (chunk) writeSync(this.fd, chunk);
  }

  private writeJson(s: Snapshot): void {
    if (this.samples === 0) {
      const m = this.meta;
      writeSync(
        this.fd,
        `{"format":"solverlab-trajectory","version":1,"scene":${JSON.stringify(m.scene)},"solver":${JSON.stringify(m.solver)},` +
          `"dt":${num(m.dt)},"every":${m.every},"bodies":${s.bodyCount},` +
          `"fields":{"position":"m","orientation":"unit quaternion [x,y,z,w]","linearVelocity":"m/s","angularVelocity":"rad/s"},\n"samples":[\n`,
      );
    }
    const array = (data: Float64Array, k: number, name: string, last: boolean) => {
      writeSync(this.fd, `"${name}":[`);
      let chunk = '';
      for (let i = 0; i < s.bodyCount; i++) {
        let row = '[';
        for (let c = 0; c < k; c++) row += (c ? ',' : '') + num(data[k * i + c]);
        chunk += (i ? ',' : '') + row + ']';
        if ((i + 1) % ROWS_PER_CHUNK === 0) {
          writeSync(this.fd, chunk);
          chunk = '';
        }
      }
      writeSync(this.fd, chunk + (last ? ']' : '],'));
    };
    writeSync(this.fd, `${this.samples ? ',\n' : ''}{"frame":${s.frame},"t":${num(s.time)},`);
    array(s.position, 3, 'position', false);
    array(s.orientation, 4, 'orientation', false);
    array(s.linearVelocity, 3, 'linearVelocity', false);
    array(s.angularVelocity, 3, 'angularVelocity', true);
    writeSync(this.fd, '}');
  }

  /** Finishes the file and moves it into place. */
  close(): void {
    if (this.closed) return;
    if (this.format === 'json') {
      if (this.samples === 0) throw new Error('trajectory: no sample written');
      writeSync(this.fd, '\n]}\n');
    }
    closeSync(this.fd);
    this.closed = true;
    renameSync(this.tmp, this.path);
    tempDone(this.tmp);
  }

  /** Drops what was written: no file is left. */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      closeSync(this.fd);
    } finally {
      rmSync(this.tmp, { force: true });
      tempDone(this.tmp);
    }
  }
}
