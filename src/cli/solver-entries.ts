/**
 * `compare --solvers`: each entry a solver, alone or with options of its own,
 *
 *   NAME[:key=value[:key=value…]]     e.g.  rapier:iterations=4,pgs-cpu:substeps=4:iterations=8
 *
 * where each key is an option's command-line flag name (`run`'s, without the dashes: iterations,
 * substeps, contact-hertz, warm-start, sleep, beta …) and each value is read and range-checked as that
 * flag's value is (solverOptionSpecs, numberFlag). Whether the solver reads the option, and whether two
 * entries are the same run, is checked by the library with every entry in view (bench/compare.ts
 * prepareCompare). Every fault is a UsageError naming the entry: one line, exit status 2.
 */
import { numberFlag, UsageError } from './args.js';
import { findSolver, solvers } from '../solvers/registry.js';
import { solverOptionSpecs, type SolverOptions, type SolverOptionSpec } from '../solvers/solver.js';
import type { SolverEntry } from '../bench/compare.js';

/** flag name → option key, from the one option table */
const optionByFlag = new Map((Object.entries(solverOptionSpecs) as [keyof SolverOptions, SolverOptionSpec][]).map(([key, spec]) => [spec.flag, key]));

/** One entry of --solvers (the list split at its commas, each entry trimmed and not empty: cli/main.ts). */
export function parseSolverEntry(text: string): SolverEntry {
  const [id, ...pairs] = text.split(':').map((x) => x.trim());
  if (!findSolver(id)) throw new UsageError(`unknown solver '${id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  if (!pairs.length) return { id };
  const settings: Partial<SolverOptions> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1)
      throw new UsageError(`--solvers '${text}': expected NAME:key=value[:key=value…] (e.g. ${id}:iterations=4), got '${pair}'`);
    const flag = pair.slice(0, eq).trim();
    const key = optionByFlag.get(flag);
    if (!key) throw new UsageError(`--solvers '${text}': unknown option '${flag}' (options: ${[...optionByFlag.keys()].join(', ')})`);
    if (key in settings) throw new UsageError(`--solvers '${text}': ${flag} given twice`);
    try {
      settings[key] = numberFlag(flag, pair.slice(eq + 1), solverOptionSpecs[key]);
    } catch (e) {
      // numberFlag names the flag as '--flag'; here it is a key of the entry
      if (e instanceof UsageError) throw new UsageError(`--solvers '${text}': ${e.message.replace(/^--/, '')}`);
      throw e;
    }
  }
  return { id, settings };
}

