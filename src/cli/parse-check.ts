/**
 * A command line checked as far as it can be without running anything: the parser (args.ts, the
 * same table `solverlab` reads), then the names and numbers each command takes — scenes, solvers
 * (with compare's NAME:key=value settings), scene parameters, solver options, frames. A scene file
 * is taken by its name alone (it may not exist yet). Throws the UsageError or InputError the command
 * would; test/doc-commands.test.ts runs it over every command shown in README.md and docs/*.md.
 */
import { parseArgs, paramFlags, numberFlag, UsageError } from './args.js';
import { commands, solverOptionsFromFlags, divergenceFlag } from './main.js';
import { parseSolverEntry } from './solver-entries.js';
import { findSolver, solvers } from '../solvers/registry.js';
import { solverOptionSpecs, type SolverOptions } from '../solvers/solver.js';
import { builtInScene, isSceneFile, InputError } from '../scenes/load.js';

function solverKnown(id: string): void {
  if (!findSolver(id)) throw new UsageError(`unknown solver '${id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
}

/** Each `--param` key belongs to at least one of the named built-in scenes (scene files take none). */
function paramsKnown(sceneRefs: string[], params: Record<string, unknown>): void {
  for (const k of Object.keys(params)) {
    const takers = sceneRefs.filter((ref) => {
      if (isSceneFile(ref)) return false;
      const s = builtInScene(ref);
      return k in s.params || k in (s.vectorParams ?? {});
    });
    if (!takers.length) throw new InputError(`--param ${k}: none of the scenes (${sceneRefs.join(', ')}) has a parameter '${k}'`);
  }
}

export function checkCommandLine(argv: string[]): void {
  const { command, flags } = parseArgs(argv, commands);
  const one = (name: string) => flags.get(name)?.[0];
  const params = paramFlags(flags.get('param') ?? []);
  const list = (name: string) => (one(name) ?? '').split(',').filter(Boolean);
  switch (command) {
    case 'run':
    case 'view': {
      const scene = one('scene');
      if (command === 'run' && !scene) throw new UsageError('run needs --scene NAME or FILE.json');
      if (scene) {
        if (!isSceneFile(scene)) builtInScene(scene);
        paramsKnown([scene], params);
      }
      for (const id of command === 'view' ? list('solver') : [one('solver') ?? 'jacobi-cpu']) solverKnown(id);
      solverOptionsFromFlags(flags);
      if (one('frames') !== undefined) numberFlag('frames', one('frames')!, { integer: true, min: 0 });
      divergenceFlag(one('divergence'));
      return;
    }
    case 'compare': {
      const sceneRefs = list('scenes');
      if (!sceneRefs.length) throw new UsageError('compare needs --scenes a,b,...');
      for (const s of sceneRefs) if (!isSceneFile(s)) builtInScene(s);
      paramsKnown(sceneRefs, params);
      const entries = list('solvers');
      if (!entries.length) throw new UsageError('compare needs --solvers a,b,...');
      for (const e of entries) {
        const { id, settings } = parseSolverEntry(e);
        const info = findSolver(id)!;
        // a setting its solver does not read is refused by compare (bench/compare.ts checkEntries)
        for (const k of Object.keys(settings ?? {}) as (keyof SolverOptions)[])
          if (!info.reads.includes(k)) throw new UsageError(`--solvers ${e}: ${id} does not read --${solverOptionSpecs[k].flag}`);
      }
      solverOptionsFromFlags(flags);
      if (one('frames') !== undefined) numberFlag('frames', one('frames')!, { integer: true, min: 1 });
      return;
    }
    case 'scenes': {
      const name = one('export');
      if (name !== undefined) {
        builtInScene(name);
        paramsKnown([name], params);
      }
      return;
    }
    case 'bench':
      for (const id of list('solvers')) solverKnown(id);
      return;
    default:
      return; // solvers, help, version: nothing more to check
  }
}
