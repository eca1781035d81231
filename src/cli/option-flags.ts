/**
 * The solver options as command-line flags, generated from the two declarations they come from:
 * solverOptionSpecs (flag, range, meaning) and each solver's SolverInfo.reads and defaults (the
 * registry). `run`, `compare` and `view` share these entries; --help prints them.
 */
import type { FlagSpec } from './args.js';
import { solvers } from '../solvers/registry.js';
import { defaultSolverOptions, solverOptionSpecs, type SolverOptions, type SolverOptionSpec } from '../solvers/solver.js';

/** The solvers that read option `key`, as --help says it. */
export function readersText(key: keyof SolverOptions): string {
  const readers = solvers.filter((s) => s.reads.includes(key)).map((s) => s.id);
  const others = solvers.filter((s) => !s.reads.includes(key)).map((s) => s.id);
  if (!others.length) return 'every solver reads it';
  return readers.length <= others.length ? `read by ${readers.join(', ')}` : `read by every solver but ${others.join(', ')}`;
}

/** The option's default, and the solvers (that read it) whose own default differs: 'default 8 (global-gpu 64)'. */
export function defaultText(key: keyof SolverOptions): string {
  const own = solvers.filter((s) => s.defaults?.[key] !== undefined && s.reads.includes(key)).map((s) => `${s.id} ${s.defaults![key]}`);
  return `default ${+defaultSolverOptions[key].toPrecision(6)}${own.length ? ` (${own.join(', ')})` : ''}`;
}

/** One flag per solver option, with its meaning, default and the solvers that read it. */
export const solverOptionFlags: Record<string, FlagSpec> = Object.fromEntries(
  (Object.entries(solverOptionSpecs) as [keyof SolverOptions, SolverOptionSpec][]).map(([key, o]) => [
    o.flag,
    { value: true, arg: o.integer ? 'N' : 'X', help: `${o.help}; ${defaultText(key)}; ${readersText(key)}` },
  ]),
);
