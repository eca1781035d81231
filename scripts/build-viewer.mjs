// Builds the browser viewer (viewer/) into static files that work from any static host:
//   index.html   the page (no inline script; loads app.js and app.css beside it)
//   app.js       the viewer and the library code it runs (scenes, solvers, metrics, schema,
//                Rapier with its inlined WebAssembly), one ES module for the browser
//   app.css      the page's style and the chart library's (uPlot)
// `npm run build:viewer` writes them to dist/viewer/; `solverlab view` calls buildViewer()
// with write: false and serves the same bytes from memory.
//
// The library's Node-only imports (the `webgpu` package, node:*) sit behind the isNode check of
// src/gpu/device.ts as dynamic imports: they are left external, so the browser never loads them.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Content types of the files the build makes. */
export const contentTypes = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * @param {{ outdir?: string, write?: boolean, minify?: boolean }} [opts]
 * @returns {Promise<{ path: string, contents: Uint8Array }[]>} the files, paths relative to the folder
 */
export async function buildViewer(opts = {}) {
  const outdir = resolve(root, opts.outdir ?? 'dist/viewer');
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: 'viewer/main.ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: ['es2022'],
    outdir,
    write: false,
    minify: opts.minify ?? true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'eof',
    external: ['webgpu', 'node:*'],
    logLevel: 'silent',
  });
  for (const w of result.warnings) console.warn(`build-viewer: ${w.text}`);
  const files = result.outputFiles.map((f) => ({ path: f.path.slice(outdir.length + 1).split('\\').join('/'), contents: f.contents }));
  files.push({ path: 'index.html', contents: readFileSync(join(root, 'viewer/index.html')) });
  if (opts.write ?? true) {
    rmSync(outdir, { recursive: true, force: true });
    for (const f of files) {
      mkdirSync(dirname(join(outdir, f.path)), { recursive: true });
      writeFileSync(join(outdir, f.path), f.contents);
    }
  }
  return files;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outdir = process.argv[2] ?? 'dist/viewer';
  const files = await buildViewer({ outdir });
  for (const f of files) console.log(`${join(outdir, f.path)}  ${(f.contents.byteLength / 1024).toFixed(0)} KiB`);
}
