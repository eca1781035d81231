/**
 * `solverlab view`: serves the browser viewer on a local web server and prints its address,
 *   viewer: http://127.0.0.1:5173/?scene=necklace&chains=4&solver=jacobi-gpu
 * then serves until SIGINT or SIGTERM. The page opens running what the flags say (they become
 * the address's query, see viewer/config.ts); a scene file given as --scene FILE is validated
 * here with the same schema as `run` and served at /scene/<name>, where the page reads it.
 *
 * The pages are the static build of scripts/build-viewer.mjs (what `npm run build:viewer`
 * writes to dist/viewer/), made in memory at start from viewer/ when the sources and esbuild
 * are there (a clone), else read from a built folder: viewer/ beside this module (a bundle)
 * or dist/viewer/. Only those files are served: no path reaches the file system.
 *
 * Bad input (unknown scene or solver, bad parameter, a port in use) is a UsageError, InputError
 * or WorldError: one line, exit status 2, nothing served.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UsageError, numberFlag, paramFlags, type FlagSpec } from './args.js';
import { loadScene, isSceneFile, builtInRefusal } from '../scenes/load.js';
import { findSolver, solvers, defaultSolverFor } from '../solvers/registry.js';
import { solverOptionSpecs, resolveOptions, type SolverOptions } from '../solvers/solver.js';
import { sceneWhat } from '../scenes/scene.js';
import { solverOptionFlags } from './option-flags.js';
import { preflight } from '../model/limits.js';

export const viewFlags: Record<string, FlagSpec> = {
  port: { value: true, arg: 'N', help: 'the port to serve on (default 5173; 0: any free port)' },
  host: { value: true, arg: 'ADDRESS', help: 'the address to serve on (default 127.0.0.1)' },
  scene: { value: true, arg: 'NAME|FILE.json', help: 'the scene the page opens with (default necklace, chains=25)' },
  param: { value: true, repeat: true, arg: 'k=v', help: "a scene parameter (see 'solverlab scenes')" },
  solver: { value: true, arg: 'ID[,ID…]', help: 'the solver, then solvers overlaid on it (default jacobi-gpu)' },
  ...solverOptionFlags,
  steps: { value: true, arg: 'K', help: 'frames stepped per drawn frame (default 1)' },
  paused: { value: false, help: 'open paused' },
};

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

export interface ViewerFile {
  /** relative to the site's root, '/'-separated */
  path: string;
  contents: Uint8Array;
}

/** Every file under `dir`, paths relative to it. */
function readFolder(dir: string): ViewerFile[] {
  const out: ViewerFile[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.push({ path: relative(dir, full).split('\\').join('/'), contents: readFileSync(full) });
    }
  };
  walk(dir);
  return out;
}

/** The viewer's static files: built now from viewer/ (a clone), else a built folder. */
export async function viewerFiles(moduleUrl: string = import.meta.url): Promise<{ files: ViewerFile[]; from: string }> {
  const here = dirname(fileURLToPath(moduleUrl));
  const root = resolve(here, '..', '..'); // src/cli, dist/cli and dist/solverlab all sit two below the root
  const script = join(root, 'scripts', 'build-viewer.mjs');
  let buildError: Error | null = null;
  if (existsSync(script) && existsSync(join(root, 'viewer', 'main.ts'))) {
    try {
      const mod = (await import(pathToFileURL(script).href)) as { buildViewer(o: { write: boolean }): Promise<ViewerFile[]> };
      return { files: await mod.buildViewer({ write: false }), from: 'viewer/ (built now)' };
    } catch (e) {
      buildError = e as Error;
    }
  }
  for (const dir of [join(here, 'viewer'), join(root, 'dist', 'viewer')]) {
    if (existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'app.js'))) return { files: readFolder(dir), from: dir };
  }
  if (buildError) {
    const first = (buildError as Error & { errors?: { text: string; location?: { file: string; line: number } }[] }).errors?.[0];
    const where = first?.location ? `${first.location.file}:${first.location.line}: ` : '';
    throw new Error(`the viewer could not be built: ${first ? where + first.text : buildError.message.split('\n')[0]}`);
  }
  throw new Error('the viewer is not built: run `npm run build:viewer` in a clone of SolverLab (it needs the dev dependency esbuild)');
}

/** A request handler serving `files` (GET and HEAD only; '/' is index.html). */
export function staticHandler(files: ViewerFile[]): (req: IncomingMessage, res: ServerResponse) => void {
  const byPath = new Map(files.map((f) => [`/${f.path}`, f]));
  return (req, res) => {
    const send = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'only GET and HEAD\n');
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://viewer').pathname);
    } catch {
      return send(400, 'bad path\n');
    }
    const file = byPath.get(path === '/' ? '/index.html' : path);
    if (!file) return send(404, `not found: ${path}\n`);
    res.writeHead(200, {
      'content-type': contentTypes[extname(file.path)] ?? 'application/octet-stream',
      'content-length': file.contents.byteLength,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      // cross-origin isolation: the page's performance.now() ticks in µs rather than 0.1 ms
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    });
    res.end(req.method === 'HEAD' ? undefined : file.contents);
  };
}

function one(flags: Map<string, string[]>, name: string): string | undefined {
  return flags.get(name)?.[0];
}

/** Listens on host:port; the faults people meet are UsageErrors (exit status 2). */
async function listen(server: Server, port: number, host: string): Promise<void> {
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, host, () => {
        server.off('error', fail);
        ok();
      });
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`--port ${port}: already in use (choose another, or --port 0 for a free one)`);
    if (code === 'EACCES') throw new UsageError(`--port ${port}: not allowed for this user (ports below 1024 need root)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') throw new UsageError(`--host ${host}: not an address of this machine`);
    throw e;
  }
}

export async function cmdView(flags: Map<string, string[]>): Promise<number> {
  const port = numberFlag('port', one(flags, 'port') ?? '5173', { integer: true, min: 0, max: 65535 });
  const host = one(flags, 'host') ?? '127.0.0.1';
  if (!host.trim()) throw new UsageError('--host needs an address, e.g. 127.0.0.1');
  const query = new URLSearchParams();

  // solvers: the first is the main one, the others are overlaid on it
  const solverIds = one(flags, 'solver')?.split(',').map((s) => s.trim()) ?? [];
  for (const id of solverIds) {
    if (!id) throw new UsageError(`--solver '${one(flags, 'solver')}' has an empty entry`);
    if (!findSolver(id)) throw new UsageError(`unknown solver '${id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  }

  // the scene: checked (and a file validated) here, so a bad one never reaches the page
  const params = paramFlags(flags.get('param') ?? []);
  const sceneRef = one(flags, 'scene') ?? (Object.keys(params).length ? 'necklace' : undefined);
  let sceneFile: { name: string; text: string } | null = null;
  if (sceneRef !== undefined) {
    // a built-in scene's memory under each solver from its count, before it is built
    for (const id of solverIds) {
      const refusal = builtInRefusal(sceneRef, params, id);
      if (refusal) throw refusal;
    }
    const scene = loadScene(sceneRef, params);
    // the options asked for, each in its range (numberFlag), for the checks below
    const asked: Partial<SolverOptions> = {};
    for (const [key, spec] of Object.entries(solverOptionSpecs) as [keyof SolverOptions, (typeof solverOptionSpecs)[keyof SolverOptions]][]) {
      const raw = one(flags, spec.flag);
      if (raw !== undefined) asked[key] = numberFlag(spec.flag, raw, spec);
    }
    const file = isSceneFile(sceneRef) ? sceneRef : undefined;
    const what = file !== undefined ? `scene file ${file}` : sceneWhat(scene.name, params);
    for (const id of solverIds.length ? solverIds : [defaultSolverFor(scene.world)]) {
      const info = findSolver(id)!;
      const why = info.unsupported?.(scene.world);
      if (why) throw new UsageError(`${id} cannot run scene '${scene.name}': ${why}`);
      // the page runs it on this machine (a local server): refused here as `run` refuses it (memory, and the
      // ranges its arithmetic carries: model/limits.ts preflight), one line naming the file, exit 2
      for (const w of preflight(what, scene.world, id, { ...resolveOptions(info, asked, scene.world), where: file ?? what })) process.stderr.write(`solverlab: warning: ${w}\n`);
    }
    if (isSceneFile(sceneRef)) {
      sceneFile = { name: basename(sceneRef), text: readFileSync(sceneRef, 'utf8') };
      query.set('file', `scene/${sceneFile.name}`);
    } else {
      query.set('scene', scene.name);
      for (const [k, v] of Object.entries(params)) query.set(k, Array.isArray(v) ? v.join(',') : String(v));
    }
  }
  if (solverIds.length) query.set('solver', solverIds.join(','));
  for (const spec of Object.values(solverOptionSpecs)) {
    const raw = one(flags, spec.flag);
    if (raw !== undefined) query.set(spec.flag, String(numberFlag(spec.flag, raw, spec)));
  }
  if (one(flags, 'steps') !== undefined) query.set('steps', String(numberFlag('steps', one(flags, 'steps')!, { integer: true, min: 1, max: 256 })));
  if (flags.has('paused')) query.set('paused', '1');

  const { files } = await viewerFiles();
  if (sceneFile) files.push({ path: `scene/${sceneFile.name}`, contents: Buffer.from(sceneFile.text) });
  const server = createServer(staticHandler(files));
  await listen(server, port, host);
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const shown = host.includes(':') ? `[${host}]` : host;
  const search = query.toString().replace(/%2C/g, ',').replace(/%2F/g, '/');
  process.stdout.write(`viewer: http://${shown}:${bound}/${search ? `?${search}` : ''}\n`);
  if (!/^(127\.|localhost$|::1$|\[::1\]$)/.test(host))
    process.stderr.write(`viewer: listening on ${host}, not only this machine's loopback: anyone who can reach it can open the viewer\n`);

  return new Promise<number>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      server.close(() => done(0));
      server.closeAllConnections();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
