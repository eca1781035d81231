/**
 * What the page starts with, from its URL query (what `solverlab view` prints, and what the page
 * keeps up to date as you change things, so a URL reopens the same run):
 *   scene=NAME          a built-in scene (default: necklace with chains=25)
 *   file=PATH           or a scene file on the same origin (solverlab view serves --scene FILE there)
 *   NAME=VALUE          the scene's parameters (its SceneInfo.params names; a vector as x,y,z)
 *   solver=ID[,ID…]     the solver, then solvers overlaid on it (default: jacobi-gpu)
 *   iterations=N, substeps=S, dt=H, beta=B, warm-start=W, compliance=…, linear-damping=…,
 *   angular-damping=…,  solver options (flags of solverOptionSpecs); unset: each solver's default
 *   sleep=0|1           (sleep=1: resting islands fall asleep, drawn dimmed; 0: every body stays awake)
 *   steps=K             frames stepped per drawn frame (default 1)
 *   paused=1            open paused
 *   contacts=1          draw the contact points and normals (0 or absent: not; anything else is
 *                       named in the "ignored" banner)
 */
import { solverOptionSpecs, type SolverOptions } from '../src/solvers/solver.js';
import { brokenBound } from '../src/model/ranges.js';
import type { ParamValue } from '../src/scenes/scene.js';

export interface ViewerConfig {
  scene: string;
  file: string | null;
  params: Record<string, ParamValue>;
  solvers: string[];
  options: Partial<SolverOptions>;
  steps: number;
  paused: boolean;
  /** draw the contact points and normals */
  contacts: boolean;
  /** query keys that could not be used, with why */
  problems: string[];
}

export const defaultScene = { scene: 'necklace', params: { chains: 25 } as Record<string, ParamValue> };
export const defaultSolver = 'jacobi-gpu';

const optionKeys = Object.entries(solverOptionSpecs).map(([key, spec]) => [key, spec.flag] as [keyof SolverOptions, string]);
const reserved = new Set(['scene', 'file', 'solver', 'steps', 'paused', 'contacts', ...optionKeys.map(([, flag]) => flag)]);

export function parseConfig(search: string): ViewerConfig {
  const q = new URLSearchParams(search);
  const problems: string[] = [];
  const number = (key: string, raw: string): number | null => {
    // decimal only, as on the command line: 0x10, 1_000 and Infinity are not numbers here
    const v = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!Number.isFinite(v)) {
      problems.push(`${key}=${raw}: not a decimal number`);
      return null;
    }
    return v;
  };
  const file = q.get('file');
  const scene = q.get('scene') ?? (file ? '' : defaultScene.scene);
  const params: Record<string, ParamValue> = {};
  for (const [k, raw] of q) {
    if (reserved.has(k)) continue;
    const parts = raw.split(',').map((x) => number(k, x));
    if (parts.every((x) => x !== null)) params[k] = parts.length === 1 ? parts[0]! : (parts as number[]);
  }
  if (!q.has('scene') && !file && !Object.keys(params).length) Object.assign(params, defaultScene.params);
  const options: Partial<SolverOptions> = {};
  for (const [key, flag] of optionKeys) {
    const raw = q.get(flag);
    if (raw === null) continue;
    const v = number(flag, raw);
    if (v === null) continue;
    // the ranges the command line holds an option to (solverOptionSpecs, model/ranges.ts): iterations=0, beta=50
    const spec = solverOptionSpecs[key];
    const broken = spec.integer && !Number.isInteger(v) ? 'an integer' : brokenBound(v, spec);
    if (broken) problems.push(`${flag}=${raw}: must be ${broken}${spec.why ? ` (${spec.why})` : ''}`);
    else options[key] = v;
  }
  const solvers = (q.get('solver') ?? defaultSolver).split(',').map((s) => s.trim()).filter(Boolean);
  let steps = q.has('steps') ? number('steps', q.get('steps')!) ?? 1 : 1;
  if (!(Number.isInteger(steps) && steps >= 1 && steps <= 256)) {
    problems.push(`steps=${q.get('steps')}: must be an integer in [1, 256]`);
    steps = 1;
  }
  const shown = q.get('contacts');
  if (shown !== null && shown !== '0' && shown !== '1') problems.push(`contacts=${shown}: expected 0 or 1`);
  return { scene, file, params, solvers: solvers.length ? solvers : [defaultSolver], options, steps, paused: q.get('paused') === '1', contacts: shown === '1', problems };
}

/** The query for a config (the inverse of parseConfig, for the address bar). */
export function configQuery(c: Pick<ViewerConfig, 'scene' | 'file' | 'params' | 'solvers' | 'options' | 'steps' | 'paused'> & { contacts?: boolean }): string {
  const q = new URLSearchParams();
  if (c.file) q.set('file', c.file);
  else if (c.scene) q.set('scene', c.scene);
  if (!c.file) for (const [k, v] of Object.entries(c.params)) q.set(k, String(v));
  q.set('solver', c.solvers.join(','));
  for (const [key, flag] of optionKeys) if (c.options[key] !== undefined) q.set(flag, String(c.options[key]));
  if (c.steps !== 1) q.set('steps', String(c.steps));
  if (c.paused) q.set('paused', '1');
  if (c.contacts) q.set('contacts', '1');
  return '?' + q.toString().replace(/%2C/g, ',').replace(/%2F/g, '/');
}
