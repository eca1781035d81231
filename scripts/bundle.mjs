// Bundles the CLI into one file, dist/solverlab/solverlab.mjs, with its one runtime
// dependency (the `webgpu` package: Dawn's dawn.node for this platform) copied beside
// it, so the folder can be copied to a GPU host that has Node but no dev toolchain:
//   node dist/solverlab/solverlab.mjs run --scene necklace --solver jacobi-gpu
// The chart library of the compare report (uPlot's JS, CSS and licence) is copied beside
// the bundle too: src/bench/report-html.ts looks beside its module first, and in the
// bundle its module is solverlab.mjs.
// The viewer's static build goes to viewer/ beside it, where `solverlab view` looks when it
// runs from the bundle (src/cli/view.ts).
import { build } from 'esbuild';
import { buildViewer } from './build-viewer.mjs';
import { cpSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const out = 'dist/solverlab';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['src/cli/bin.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: join(out, 'solverlab.mjs'),
  external: ['webgpu'],
  // the bundle starts itself again with the heap the machine allows (src/cli/heap.ts)
  define: { SOLVERLAB_BUNDLED: 'true' },
  logLevel: 'warning',
});
const pkg = 'node_modules/webgpu';
const plat = process.platform === 'darwin' ? 'darwin-universal' : `${process.platform}-${process.arch}`;
const dest = join(out, 'node_modules/webgpu');
for (const f of ['package.json', 'index.js', 'LICENSE.md']) cpSync(join(pkg, f), join(dest, f));
if (existsSync(join(pkg, 'dist', plat))) cpSync(join(pkg, 'dist', plat), join(dest, 'dist', plat), { recursive: true });
else console.warn(`bundle: no dawn.node for ${plat} in ${pkg}`);
// uPlot, inlined by the report: the same file names report-html.ts looks for (uplotFiles)
const uplot = 'node_modules/uplot';
cpSync(join(uplot, 'dist/uPlot.iife.min.js'), join(out, 'uPlot.iife.min.js'));
cpSync(join(uplot, 'dist/uPlot.min.css'), join(out, 'uPlot.min.css'));
cpSync(join(uplot, 'LICENSE'), join(out, 'uPlot.LICENSE'));
await buildViewer({ outdir: join(out, 'viewer') });
// the viewer's render benchmark (scripts/bench-render.ts), for a GPU host with Node alone
await build({
  entryPoints: ['scripts/bench-render.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: join(out, 'bench-render.mjs'),
  external: ['webgpu'],
  logLevel: 'warning',
});
console.log(`bundle: ${out}/solverlab.mjs (+ node_modules/webgpu for ${plat}, uPlot for the compare report, viewer/ for solverlab view, bench-render.mjs)`);
