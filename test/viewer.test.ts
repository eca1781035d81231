/**
 * The browser viewer (`solverlab view`), end to end: the command serves the page and prints its
 * address; headless Chromium opens it with WebGPU on the SwiftShader software adapter, runs the
 * necklace, and the heads-up line reports the scene's bodies and constraints, frames advancing
 * and a finite ms/step; switching and overlaying solvers shows in the heads-up line and on the
 * canvas (pixels in each solver's colour); bad scene files (uploaded and dropped) are refused
 * with the command line's own message; a diverging solver is stopped and flagged while the page
 * goes on; a browser without WebGPU gets a page that says how to enable it. A particle scene is
 * drawn (beads, rods, its wire) and its numbers are the ones `solverlab run` measures. No test page
 * logs an error or asks anything of another origin. A contact scene draws its ground plane (a ramp
 * tilted as its plane is) and, on demand (checkbox, key c, contacts=1), its contact points. With
 * sleep=1 a settled pyramid falls asleep: the heads-up line counts 0 of its 6 bodies awake and every
 * box is drawn dimmed (its pixels leave the solver's colour for the dimmed one). Bad input to the
 * command is one line, exit status 2.
 *
 * The browser is /usr/bin/chromium (Debian's `chromium`, installed by scripts/setup.sh).
 * Without it the browser tests are skipped, except under CI, where that is a failure.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadScene } from '../src/scenes/load.js';
import { parseAnySceneFile } from '../src/scenes/scene-file.js';
import { sceneFileJson } from '../src/model/schema.js';
import { findScene } from '../src/scenes/registry.js';
import { resolveParams } from '../src/scenes/scene.js';
import type { WorldDesc } from '../src/model/world.js';
import { chromiumPath, haveBrowser } from './support/browser.js';
import { renderInfo, dimmedColour, POSE_ASLEEP, GROUND_FLOATS, GROUND_HALF_EXTENTS, JOINT_BYTES, JOINT_POINT, JOINT_ROD, POSE_FLOATS, SHAPE_FLOATS, SHAPE_PLANE, type Drawable } from '../viewer/render-info.js';
import { configQuery, parseConfig } from '../viewer/config.js';
import { CONTACT_COLOUR, palette as slotPalette } from '../viewer/colours.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { metricsFor } from '../src/metrics/metrics.js';
import type { ParticleSystemDesc } from '../src/model/particle-system.js';
import { TIME_TO_SLEEP } from '../src/collision/islands.js';

/** WebGPU on SwiftShader in headless Chromium (docs: shared/design.md, GPU notes) */
const webgpuFlags = ['--headless=new', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader', '--use-angle=swiftshader'];
const dir = mkdtempSync(join(tmpdir(), 'solverlab-viewer-'));
/** the viewer's clear colour (viewer/renderer.ts BACKGROUND) in 8-bit */
const background = [0.082, 0.09, 0.106].map((c) => Math.round(c * 255));

const cliArgs = ['--import', 'tsx', 'src/cli/bin.ts', 'view'];


// --- the server and the browser, shared by the browser tests -----------------------------------

interface Viewer {
  /** the address the command printed */
  url: string;
  origin: string;
  proc: ChildProcess;
}

/** Starts `solverlab view ARGS` and resolves with the address it prints (or rejects with its stderr). */
function startViewer(args: string[]): Promise<Viewer> {
  const proc = spawn(process.execPath, [...cliArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '', err = '';
    const timer = setTimeout(() => reject(new Error(`no address within 60 s: ${err}`)), 60_000);
    proc.stderr!.on('data', (d) => (err += d));
    proc.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) {
        clearTimeout(timer);
        const url = line.replace(/^viewer: /, '');
        resolve({ url, origin: new URL(url).origin, proc });
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`solverlab view exited (${code}) before printing its address: ${err}`));
    });
  });
}

/** SIGINT, and the exit status it leaves. */
function stopViewer(v: Viewer): Promise<number | null> {
  if (v.proc.exitCode !== null) return Promise.resolve(v.proc.exitCode);
  return new Promise((resolve) => {
    v.proc.on('exit', (code) => resolve(code));
    v.proc.kill('SIGINT');
  });
}

const shared: { viewer: Promise<Viewer> | null; browser: Promise<Browser> | null } = { viewer: null, browser: null };
/** The args of the shared server: the e2e test checks the address they give. */
const serverArgs = ['--port', '0', '--scene', 'necklace', '--param', 'chains=2', '--param', 'beads=10', '--solver', 'jacobi-gpu'];

function viewer(): Promise<Viewer> {
  shared.viewer ??= startViewer(serverArgs);
  return shared.viewer;
}
function browser(): Promise<Browser> {
  shared.browser ??= chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', ...webgpuFlags] });
  return shared.browser;
}
after(async () => {
  if (shared.browser) await (await shared.browser).close();
  if (shared.viewer) await stopViewer(await shared.viewer);
});

interface Watched {
  page: Page;
  consoleErrors: string[];
  /** requests to any other origin (aborted) */
  outside: string[];
}

/** A new page that records console errors and refuses every request outside `origin`. */
async function openPage(origin: string, path: string, init?: () => void): Promise<Watched> {
  const page = await (await browser()).newPage({ viewport: { width: 960, height: 640 } });
  const consoleErrors: string[] = [];
  const outside: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin + '/') || u.startsWith('data:')) return route.continue();
    outside.push(u);
    return route.abort();
  });
  if (init) await page.addInitScript(init);
  await page.goto(new URL(path, origin).href);
  return { page, consoleErrors, outside };
}

type Data = Record<string, string | undefined>;

/** The heads-up line's data attributes. */
function hud(page: Page): Promise<Data> {
  return page.evaluate(() => ({ ...document.getElementById('hud')!.dataset }));
}

/** The legend rows' data attributes, one per solver. */
function legend(page: Page): Promise<Data[]> {
  return page.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>('#legend .slot[data-solver]')).map((e) => ({ ...e.dataset })));
}

/** Waits until the main solver is `solver` (solvers: the list) and has stepped at least `frames` frames. */
async function waitForFrames(page: Page, solvers: string, frames: number, timeout = 40_000): Promise<Data> {
  await page.waitForFunction(
    ([s, n]) => {
      const d = document.getElementById('hud')!.dataset;
      return d.solvers === s && Number(d.frames) >= (n as number);
    },
    [solvers, frames] as const,
    { timeout },
  );
  return hud(page);
}

// --- a small PNG reader (the screenshots): 8-bit RGB or RGBA, non-interlaced --------------------

interface Image {
  width: number;
  height: number;
  /** RGBA */
  data: Uint8Array;
}

export function decodePng(png: Buffer): Image {
  assert.equal(png.readUInt32BE(0), 0x89504e47, 'a PNG');
  let width = 0, height = 0, channels = 0;
  const idat: Buffer[] = [];
  for (let o = 8; o < png.length; ) {
    const length = png.readUInt32BE(o);
    const type = png.toString('latin1', o + 4, o + 8);
    const body = png.subarray(o + 8, o + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      assert.equal(body[8], 8, 'bit depth 8');
      channels = ({ 2: 3, 6: 4 } as Record<number, number>)[body[9]];
      assert.ok(channels, `colour type ${body[9]}`);
      assert.equal(body[12], 0, 'not interlaced');
    } else if (type === 'IDAT') idat.push(body);
    o += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const rows = new Uint8Array(stride * height);
  // undo the per-row filters (PNG spec, section 9): none, sub, up, average, Paeth
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= channels ? rows[y * stride + x - channels] : 0;
      const b = y > 0 ? rows[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? rows[(y - 1) * stride + x - channels] : 0;
      let p = 0;
      if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else if (filter === 4) {
        const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      rows[y * stride + x] = (v + p) & 0xff;
    }
  }
  const data = new Uint8Array(4 * width * height);
  for (let i = 0; i < width * height; i++) {
    data.set(rows.subarray(i * channels, i * channels + 3), 4 * i);
    data[4 * i + 3] = channels === 4 ? rows[i * channels + 3] : 255;
  }
  return { width, height, data };
}

/** Pixels unlike the background, and pixels of each colour (same hue, lit or shaded: chromaticity within 0.04). */
function inspectImage(img: Image, colours: string[]): { differing: number; byColour: Record<string, number> } {
  const targets = colours.map((c) => {
    const rgb = [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
    const sum = rgb[0] + rgb[1] + rgb[2];
    return { c, r: rgb[0] / sum, g: rgb[1] / sum };
  });
  const byColour = Object.fromEntries(colours.map((c) => [c, 0]));
  let differing = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const r = img.data[i], g = img.data[i + 1], b = img.data[i + 2];
    if (Math.abs(r - background[0]) + Math.abs(g - background[1]) + Math.abs(b - background[2]) > 24) differing++;
    const sum = r + g + b;
    if (sum < 120) continue;
    for (const t of targets) if (Math.abs(r / sum - t.r) < 0.04 && Math.abs(g / sum - t.g) < 0.04) byColour[t.c]++;
  }
  return { differing, byColour };
}

// --- the command line -------------------------------------------------------------------------

/** `solverlab view ARGS` run to its end (bad input: it must end at once). */
function runView(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [...cliArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

test('solverlab view: bad input is one line on stderr, exit status 2, nothing served', async () => {
  const badFile = join(dir, 'bad-radius.json');
  writeFileSync(badFile, JSON.stringify({ gravity: [0, -9.81, 0], bodies: [{ shape: { type: 'sphere', radius: -0.1 }, density: 1000, position: [0, 0, 0] }], constraints: [] }));
  const busy = createServer();
  await new Promise<void>((ok) => busy.listen(0, '127.0.0.1', ok));
  const busyPort = (busy.address() as { port: number }).port;
  const cases: [string[], RegExp][] = [
    [['--solver', 'nope'], /unknown solver 'nope'/],
    [['--scene', 'nope'], /unknown scene 'nope'/],
    [['--scene', 'necklace', '--param', 'chains=abc'], /chains must be a number/],
    [['--scene', 'necklace', '--param', 'foo=1'], /no parameter 'foo'/],
    [['--scene', badFile], /bad-radius\.json: bodies\[0\]\.shape\.radius: expected a number > 0, got -0\.1/],
    [['--port', '70000'], /--port must be ≤ 65535/],
    [['--iterations', 'x'], /--iterations must be a number/],
    [['--port', String(busyPort)], new RegExp(`--port ${busyPort}: already in use`)],
  ];
  try {
    const results = await Promise.all(cases.map(([args]) => runView(args)));
    results.forEach((r, i) => {
      const [args, message] = cases[i];
      assert.equal(r.status, 2, `view ${args.join(' ')} → status ${r.status}: ${r.stderr}`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `view ${args.join(' ')}: expected one line, got:\n${r.stderr}`);
      assert.match(lines[0], message);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
      assert.equal(r.stdout, '', 'no address printed');
    });
  } finally {
    busy.close();
  }
});

test('solverlab view --scene FILE serves the validated file to the page, and SIGINT stops it cleanly', async (t) => {
  const spec = findScene('hanging-chain')!;
  const text = sceneFileJson(spec.build(resolveParams(spec, { beads: 3 })) as WorldDesc, { name: 'three beads' });
  const file = join(dir, 'three beads.json');
  writeFileSync(file, text);
  const v = await startViewer(['--port', '0', '--scene', file, '--solver', 'xpbd-cpu', '--iterations', '2']);
  try {
    assert.match(v.url, /^http:\/\/127\.0\.0\.1:\d+\/\?file=scene\/three\+beads\.json&solver=xpbd-cpu&iterations=2$/);
    const served = await fetch(`${v.origin}/scene/three%20beads.json`);
    assert.equal(served.status, 200);
    assert.equal(await served.text(), text);
    assert.equal((await fetch(`${v.origin}/nothing-here`)).status, 404);
    if (existsSync(chromiumPath) || process.env.CI) {
      if (!haveBrowser(t)) return;
      const { page, consoleErrors } = await openPage(v.origin, v.url);
      try {
        const h = await waitForFrames(page, 'xpbd-cpu', 5);
        assert.equal(h.scene, 'file:three beads.json');
        assert.equal(h.bodies, '3');
        assert.equal(await page.inputValue('#options input[data-option="iterations"]'), '2');
        assert.deepEqual(consoleErrors, []);
      } finally {
        await page.close();
      }
    }
  } finally {
    assert.equal(await stopViewer(v), 0, 'exit status after SIGINT');
  }
});

// --- the page -----------------------------------------------------------------------------------

test('the necklace runs on the GPU, solvers switch and overlay, the canvas shows the beads, offline and error-free', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  assert.match(v.url, /^http:\/\/127\.0\.0\.1:\d+\/\?scene=necklace&chains=2&beads=10&solver=jacobi-gpu$/, 'the printed address');
  const expected = loadScene('necklace', { chains: 2, beads: 10 }).world as WorldDesc;
  const { page, consoleErrors, outside } = await openPage(v.origin, v.url);
  try {
    // 60 frames of jacobi-gpu
    const h = await waitForFrames(page, 'jacobi-gpu', 60);
    t.diagnostic(`after 60 frames: ${JSON.stringify(h)}`);
    assert.equal(h.bodies, String(expected.bodies.length));
    assert.equal(h.constraints, String(expected.constraints.length));
    assert.equal(h.scene, 'necklace');
    assert.equal(h.status, 'running');
    assert.match(h.adapter!, /swiftshader/i);
    assert.ok(Number.isFinite(Number(h.msPerStep)) && Number(h.msPerStep) > 0, `ms/step ${h.msPerStep}`);
    assert.ok(['gpu-timestamp', 'wall'].includes(h.clock!), `clock ${h.clock}`);
    assert.ok(Number(h.stepsPerSecond) > 0, `steps/s ${h.stepsPerSecond}`);
    const text = await page.textContent('#hud');
    assert.match(text!, /20 bodies.*20 constraints.*jacobi-gpu: [\d.]+ ms\/step \((GPU|wall)\)/s);
    let rows = await legend(page);
    assert.equal(rows[0].zeroCopy, 'true', 'a GPU solver is drawn from its own buffer');
    const colour = rows[0].colour!;
    // plots: one line each, points arriving
    const points = await page.evaluate(() => Number(document.getElementById('plot-violation')!.dataset.points));
    assert.ok(points > 10, `${points} plot points`);

    const png = await page.locator('#view').screenshot({ path: join(dir, 'viewer-jacobi-gpu.png') });
    const seen = inspectImage(decodePng(png), [colour]);
    t.diagnostic(`screenshot ${join(dir, 'viewer-jacobi-gpu.png')}: ${JSON.stringify(seen)}`);
    assert.ok(seen.differing > 5000, `the canvas is blank: ${seen.differing} pixels differ from the background`);
    assert.ok(seen.byColour[colour] > 200, `beads in ${colour}: ${seen.byColour[colour]} pixels`);

    // switch to the CPU twin: uploaded from its snapshots
    await page.selectOption('#solver', 'jacobi-cpu');
    const cpu = await waitForFrames(page, 'jacobi-cpu', 20);
    assert.equal(cpu.solver, 'jacobi-cpu');
    assert.equal(cpu.clock, 'wall');
    assert.equal(cpu.bodies, String(expected.bodies.length));
    rows = await legend(page);
    assert.equal(rows[0].zeroCopy, 'false');
    assert.match((await page.textContent('#hud'))!, /jacobi-cpu: [\d.]+ ms\/step \(wall\)/);

    // overlay xpbd-gpu on it: two colours on the canvas
    await page.check('#overlay input[data-solver="xpbd-gpu"]');
    await waitForFrames(page, 'jacobi-cpu,xpbd-gpu', 20);
    rows = await legend(page);
    assert.deepEqual(rows.map((r) => [r.solver, r.status]), [['jacobi-cpu', 'running'], ['xpbd-gpu', 'running']]);
    assert.notEqual(rows[0].colour, rows[1].colour);
    const both = inspectImage(decodePng(await page.locator('#view').screenshot({ path: join(dir, 'viewer-overlay.png') })), [rows[0].colour!, rows[1].colour!]);
    t.diagnostic(`overlay screenshot: ${JSON.stringify(both)}`);
    assert.ok(both.differing > 5000);
    for (const r of rows) assert.ok(both.byColour[r.colour!] > 50, `${r.solver} in ${r.colour}: ${both.byColour[r.colour!]} pixels`);
    const url = await page.evaluate(() => location.search);
    assert.match(url, /solver=jacobi-cpu,xpbd-gpu/, 'the address follows the run');

    // pause, three single steps, reset, play
    await page.click('#play');
    // the heads-up line says paused once the frame in flight at the click is done: no step after it
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.state === 'paused');
    const paused = Number((await hud(page)).frames);
    for (let k = 1; k <= 3; k++) {
      await page.click('#step');
      await page.waitForFunction((f) => Number(document.getElementById('hud')!.dataset.frames) === f, paused + k);
    }
    await page.click('#reset');
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.frames === '0');
    assert.equal((await legend(page)).every((r) => r.frame === '0'), true);
    await page.click('#play');
    await waitForFrames(page, 'jacobi-cpu,xpbd-gpu', 5);

    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(outside, [], 'requests outside the server');
  } finally {
    await page.close();
  }
});

test('a bad scene file, uploaded or dropped, is refused with the command line\'s message; a good one runs', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  const { page, consoleErrors, outside } = await openPage(v.origin, '/?scene=pendulum&solver=jacobi-cpu');
  try {
    await waitForFrames(page, 'jacobi-cpu', 5);
    const expectedError = (name: string, text: string) => {
      try {
        parseAnySceneFile(text);
      } catch (e) {
        return `${name}: ${(e as Error).message}`;
      }
      assert.fail(`${name} should be refused`);
    };
    const sphere = { type: 'sphere', radius: 0.05 };
    const files: [string, string][] = [
      ['bad-radius.json', JSON.stringify({ gravity: [0, -9.81, 0], bodies: [{ shape: { ...sphere, radius: -0.1 }, density: 1000, position: [0, 0, 0] }], constraints: [] })],
      ['typo.json', JSON.stringify({ gravity: [0, -9.81, 0], bodies: [{ shape: { type: 'sphere', raduis: 0.05 }, density: 1000, position: [0, 0, 0] }], constraints: [] })],
      ['broken.json', '{ "gravity": [0, -9.81, 0], "bodies": [ }'],
    ];

    // upload through the file input
    const [name, text] = files[0];
    await page.setInputFiles('#scene-file', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
    await page.waitForFunction(() => !document.getElementById('scene-error')!.hidden);
    const message = expectedError(name, text);
    assert.equal(await page.textContent('#scene-error'), message);
    assert.match(message, /bad-radius\.json: bodies\[0\]\.shape\.radius: expected a number > 0, got -0\.1/);

    // dropped on the page
    for (const [name, text] of files.slice(1)) {
      await page.evaluate(
        ([n, body]) => {
          const dt = new DataTransfer();
          dt.items.add(new File([body], n, { type: 'application/json' }));
          document.getElementById('view-wrap')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
        },
        [name, text] as const,
      );
      const expected = expectedError(name, text);
      await page.waitForFunction((m) => document.getElementById('scene-error')!.textContent === m, expected);
      t.diagnostic(expected);
    }
    assert.match((await page.textContent('#scene-error'))!, /broken\.json: \(file\): malformed JSON: .* at line 1, column \d+/);

    // the page is alive: the pendulum still runs
    const before = Number((await hud(page)).frames);
    await waitForFrames(page, 'jacobi-cpu', before + 10);
    assert.equal((await hud(page)).scene, 'pendulum');

    // a good file: the scene switches to it
    const spec = findScene('hanging-chain')!;
    const good = sceneFileJson(spec.build(resolveParams(spec, { beads: 4 })) as WorldDesc, { name: 'four beads' });
    await page.setInputFiles('#scene-file', { name: 'good.json', mimeType: 'application/json', buffer: Buffer.from(good) });
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.scene === 'file:good.json');
    await page.waitForFunction(() => Number(document.getElementById('hud')!.dataset.frames) >= 5);
    const h = await hud(page);
    assert.equal(h.bodies, '4');
    assert.equal(await page.isHidden('#scene-error'), true, 'the error is cleared');

    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(outside, [], 'requests outside the server');
  } finally {
    await page.close();
  }
});

test('a diverging solver is stopped and flagged; the other solver and the page go on', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  // warm-started Jacobi loses the 10-bead hanging chain at frame 112 (README); XPBD holds it
  const { page, consoleErrors } = await openPage(v.origin, '/?scene=hanging-chain&beads=10&solver=jacobi-cpu,xpbd-cpu&steps=8');
  try {
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#legend .slot[data-solver="jacobi-cpu"]')?.dataset.status === 'diverged', null, { timeout: 30_000 });
    const rows = await legend(page);
    t.diagnostic(rows[0].reason!);
    assert.match(rows[0].reason!, /^DIVERGED at frame \d+ \(t = [\d.]+ s\): /);
    assert.doesNotMatch(rows[0].reason!, /NaN/);
    const frozen = Number(rows[0].frame);
    const rendered = Number((await hud(page)).rendered);
    await page.waitForFunction(
      ([f, r]) => {
        const xpbd = document.querySelector<HTMLElement>('#legend .slot[data-solver="xpbd-cpu"]')!.dataset;
        return Number(xpbd.frame) > f + 40 && Number(document.getElementById('hud')!.dataset.rendered) > r + 5;
      },
      [frozen, rendered] as const,
      { timeout: 30_000 },
    );
    const after = await legend(page);
    assert.equal(after[0].frame, String(frozen), 'the diverged solver stepped no more');
    assert.equal(after[1].status, 'running');
    assert.match((await page.textContent('#hud'))!, /DIVERGED/);
    assert.deepEqual(consoleErrors, [], 'console errors');
  } finally {
    await page.close();
  }
});

test('without WebGPU the page says so and how to enable it; CPU solvers still run', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  const { page, consoleErrors, outside } = await openPage(v.origin, v.url, () => {
    Object.defineProperty(Navigator.prototype, 'gpu', { value: undefined, configurable: true });
  });
  try {
    await page.waitForSelector('#no-webgpu', { state: 'visible' });
    const text = (await page.textContent('#no-webgpu'))!;
    assert.match(text, /no WebGPU/);
    assert.match(text, /enable-unsafe-webgpu/);
    // the asked-for jacobi-gpu is replaced by its CPU twin; GPU solvers are disabled
    const h = await waitForFrames(page, 'jacobi-cpu', 10);
    assert.equal(h.adapter, 'none');
    assert.equal(await page.isDisabled('#solver option[value="xpbd-gpu"]'), true);
    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(outside, [], 'requests outside the server');
  } finally {
    await page.close();
  }
});

test('npm run build:viewer writes the files the server serves', async (t) => {
  const { buildViewer } = (await import('../scripts/build-viewer.mjs' as string)) as {
    buildViewer(o: { outdir: string; write: boolean }): Promise<{ path: string; contents: Uint8Array }[]>;
  };
  const out = join(dir, 'static');
  const files = await buildViewer({ outdir: out, write: true });
  const names = files.map((f) => f.path).sort();
  for (const name of ['index.html', 'app.js', 'app.css']) assert.ok(names.includes(name), `${name} built`);
  const html = readFileSync(join(out, 'index.html'), 'utf8');
  // relative references only: the folder works from any static host
  for (const [, ref] of html.matchAll(/(?:src|href)="([^"]+)"/g)) assert.ok(!/^(\/|[a-z]+:\/\/)/i.test(ref), `absolute reference ${ref}`);
  if (!existsSync(chromiumPath) && !process.env.CI) return; // the server half needs no browser, but shares its start-up
  const v = await viewer();
  for (const f of files) {
    if (f.path.endsWith('.map')) continue; // a source map names its sources relative to the folder it was written to
    const served = Buffer.from(await (await fetch(`${v.origin}/${f.path}`)).arrayBuffer());
    assert.ok(served.equals(readFileSync(join(out, f.path))), `${f.path}: the server serves the static build`);
  }
  assert.equal((await fetch(`${v.origin}/../package.json`)).status, 404);
});

// --- particle scenes ----------------------------------------------------------------------------

test('particle scenes are drawable: the wire is a circle of the constraint\'s radius, rods join their particles, nails hold theirs', () => {
  const bead = loadScene('bead-on-wire', { radius: 2 }).world as ParticleSystemDesc;
  const info = renderInfo(bead) as Drawable;
  assert.equal(info.drawable, true);
  assert.equal(info.planar, true, 'a 2-D scene is seen face on');
  assert.equal(info.bodyCount, 1);
  // every guide vertex lies on the wire |x − c| = r, in the plane z = 0
  const g = info.guides;
  assert.ok(g.length >= 6 * 32, `${g.length / 6} guide segments`);
  for (let k = 0; k < g.length; k += 3) {
    assert.ok(Math.abs(Math.hypot(g[k], g[k + 1]) - 2) < 1e-6, `guide vertex ${k / 3} off the wire`);
    assert.equal(g[k + 2], 0);
  }
  // the bead starts on the wire as drawn: its pose is its position, identity orientation
  assert.deepEqual(Array.from(info.initialPoses), [...bead.particles[0].position, 0, 0, 0, 0, 0, 1]);

  const rope = loadScene('rope', { particles: 5, length: 2 }).world as ParticleSystemDesc;
  const r = renderInfo(rope) as Drawable;
  assert.equal(r.planar, false);
  const u = new Uint32Array(r.joints), i32 = new Int32Array(r.joints), f = new Float32Array(r.joints);
  const records = Array.from({ length: r.jointCount }, (_, k) => {
    const o = (JOINT_BYTES / 4) * k;
    return { a: u[o], b: i32[o + 1], kind: u[o + 2], rb: Array.from(f.subarray(o + 8, o + 11)) };
  });
  assert.deepEqual(records[0], { a: 0, b: -1, kind: JOINT_POINT, rb: [0, 0, 0] }, 'the nail: particle 0 to its world point');
  for (let k = 1; k < 5; k++) assert.deepEqual(records[k], { a: k - 1, b: k, kind: JOINT_ROD, rb: [0, 0, 0] });
  // the rope, nailed at one end, can hang its whole length below the nail and swing through it
  assert.ok(r.bounds.min[1] <= -2 && r.bounds.min[0] <= -2 && r.bounds.max[0] >= 2, JSON.stringify(r.bounds));

  // a CPU snapshot packs into the pose layout the GPU solvers keep
  const out = new Float32Array(POSE_FLOATS * 5);
  r.packPoses({ frame: 0, time: 0, bodyCount: 5, position: Float64Array.from(rope.particles.flatMap((p) => p.position)), orientation: Float64Array.from({ length: 20 }, (_, k) => (k % 4 === 3 ? 1 : 0)), linearVelocity: new Float64Array(15), angularVelocity: new Float64Array(15) }, out);
  assert.deepEqual(out, r.initialPoses);
});

test('the bead on its wire: drawn with its wire, and the numbers shown are the ones the library measures', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  const { page, consoleErrors, outside } = await openPage(v.origin, '/?scene=bead-on-wire&velocity=0,-3&solver=witkin-rk4');
  try {
    await waitForFrames(page, 'witkin-rk4', 30);
    await page.click('#play');
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.state === 'paused');
    const h = await hud(page);
    const [row] = await legend(page);
    t.diagnostic(JSON.stringify(row));
    assert.equal(h.bodies, '1');
    assert.equal(h.constraints, '1');
    assert.doesNotMatch((await page.textContent('#hud'))!, /not drawable/);
    assert.equal(row.zeroCopy, 'false', 'a CPU solver is drawn from its snapshots');
    // the options shown are the Witkin solver's: dt, substeps, k_s, k_d; no iterations, β or warm start
    const shown = await page.evaluate(() => Array.from(document.querySelectorAll<HTMLInputElement>('#options input[data-option], #more-options input[data-option]')).map((e) => e.dataset.option));
    assert.deepEqual(shown.sort(), ['dt', 'feedbackDamping', 'feedbackStiffness', 'substeps']);

    // the same run in the library, to the frame the page stopped at: the same violation and energy
    const frame = Number(row.frame);
    const desc = loadScene('bead-on-wire', { velocity: [0, -3] }).world;
    const info = findSolver('witkin-rk4')!;
    const solver = await info.create(desc, resolveOptions(info, {}));
    await solver.step(frame);
    const m = metricsFor(desc).measure(await solver.snapshot());
    assert.ok(m.maxViolation < 1e-5, `the bead stays on its wire: ${m.maxViolation} m`);
    assert.equal(Number(row.maxViolation), m.maxViolation, 'max |c| shown');
    assert.equal(Number(row.energy), m.energy, 'energy shown');

    // on the canvas: the bead in its colour and the wire in the guides' colour
    const wire = '#dbcc94'; // viewer/shaders.wgsl.ts guide_fs (0.86, 0.8, 0.58)
    const seen = inspectImage(decodePng(await page.locator('#view').screenshot({ path: join(dir, 'viewer-bead.png') })), [row.colour!, wire]);
    t.diagnostic(`bead screenshot: ${JSON.stringify(seen)}`);
    assert.ok(seen.byColour[row.colour!] > 50, `the bead: ${seen.byColour[row.colour!]} pixels`);
    assert.ok(seen.byColour[wire] > 300, `the wire: ${seen.byColour[wire]} pixels`);
    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(outside, [], 'requests outside the server');
  } finally {
    await page.close();
  }
});

test('the heads-up line is whole at 1280 px: every part inside the page, none cut off', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  // the longest heads-up line: a GPU solver (adapter name, GPU clock) overlaid with another, a diverging one
  const { page, consoleErrors } = await openPage(v.origin, '/?scene=necklace&chains=2&beads=10&solver=jacobi-gpu,gs-gpu');
  try {
    await page.setViewportSize({ width: 1280, height: 720 });
    await waitForFrames(page, 'jacobi-gpu,gs-gpu', 20);
    await page.waitForTimeout(400); // a refresh of the line at the new width
    const box = await page.evaluate(() => {
      const hud = document.getElementById('hud')!;
      const r = hud.getBoundingClientRect();
      const parts = Array.from(hud.children).map((c) => {
        const b = c.getBoundingClientRect();
        return { text: c.textContent, left: b.left, right: b.right, top: b.top, bottom: b.bottom };
      });
      return { scrollWidth: hud.scrollWidth, clientWidth: hud.clientWidth, right: r.right, bottom: r.bottom, top: r.top, viewport: innerWidth, text: hud.textContent, parts };
    });
    t.diagnostic(`heads-up line at 1280 px: ${box.clientWidth} px wide, ${Math.round(box.bottom - box.top)} px high: ${box.text}`);
    assert.match(box.text!, /ms\/frame/, 'the line ends with the frame time');
    assert.ok(box.scrollWidth <= box.clientWidth, `nothing hidden past the right edge: ${box.scrollWidth} > ${box.clientWidth} px`);
    for (const p of box.parts) {
      assert.ok(p.right <= box.viewport + 0.5, `'${p.text}' ends at ${p.right} px, beyond the page's ${box.viewport}`);
      assert.ok(p.bottom <= box.bottom + 0.5 && p.top >= box.top - 0.5, `'${p.text}' inside the line's box`);
    }
    assert.deepEqual(consoleErrors, [], 'console errors');
  } finally {
    await page.close();
  }
});

test('an invalid parameter in the address is named in the "ignored" banner, and the page runs without it', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  // chains=-1 is below the parameter's minimum; frames=0x10 is not a decimal number; beads=5 is good
  const { page } = await openPage(v.origin, '/?scene=necklace&chains=-1&beads=5&iterations=0x10&solver=jacobi-cpu');
  try {
    const h = await waitForFrames(page, 'jacobi-cpu', 5);
    const notice = (await page.textContent('#notice')) ?? '';
    t.diagnostic(`banner: ${notice}`);
    assert.match(notice, /Ignored in the address/);
    assert.match(notice, /chains=-1: parameter 'chains' must be ≥ 1/);
    assert.match(notice, /iterations=0x10: not a decimal number/);
    // the rest of the address holds: 5 beads per chain, the scene's default number of chains
    const chains = findScene('necklace')!.params.chains.default;
    assert.equal(Number(h.bodies), 5 * chains, `${h.bodies} bodies: ${chains} chains of the 5 beads asked for`);
    assert.equal(await page.inputValue('#params input[data-param="beads"]'), '5');
    // the address the page writes back no longer carries what it ignored
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('chains'), null, page.url());
    assert.equal(url.searchParams.get('beads'), '5', page.url());
  } finally {
    await page.close();
  }
});

test("the option controls are the main solver's declared options (SolverInfo.reads)", async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  for (const id of ['rapier-multibody', 'global-cpu', 'xpbd-cpu']) {
    const { page } = await openPage(v.origin, `/?scene=pendulum&solver=${id}&paused=1`);
    try {
      await page.waitForFunction((s) => document.getElementById('hud')!.dataset.solver === s, id, { timeout: 40_000 });
      const shown = await page.evaluate(() => Array.from(document.querySelectorAll<HTMLInputElement>('#options input[data-option], #more-options input[data-option]')).map((e) => e.dataset.option!));
      assert.deepEqual(shown.sort(), [...findSolver(id)!.reads].sort(), id);
      // rapier-multibody uses no Baumgarte β and no warm start; global-cpu solves directly, no iterations
      if (id === 'rapier-multibody') assert.ok(!shown.includes('beta') && !shown.includes('warmStart'), shown.join());
      if (id === 'global-cpu') assert.ok(!shown.includes('iterations'), shown.join());
    } finally {
      await page.close();
    }
  }
});

// --- contact scenes -----------------------------------------------------------------------------

/** the ground's colour (viewer/shaders.wgsl.ts GROUND (0.36, 0.45, 0.35)) and the contacts' (viewer/colours.ts CONTACT_COLOUR (0.7, 0.4, 1)), 8-bit hex */
const groundHex = '#5c7359';
const contactHex = '#b366ff';

test("the contact points' colour is told from every solver slot's and the ground's (pgs-cpu's overlay was the same red)", () => {
  const hexRgb = (h: string) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255);
  // hue angle (HSV), degrees: what tells colours apart at a glance; a grey (no saturation) has none
  const hue = (rgb: number[]) => {
    const [r, g, b] = rgb, max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
    if (d < 0.1 * max) return null;
    const h = max === r ? (g - b) / d : max === g ? 2 + (b - r) / d : 4 + (r - g) / d;
    return (60 * h + 360) % 360;
  };
  // chromaticity (r, g)/(r + g + b), as inspectImage counts a colour lit or shaded
  const chroma = (rgb: number[]) => [rgb[0] / (rgb[0] + rgb[1] + rgb[2]), rgb[1] / (rgb[0] + rgb[1] + rgb[2])];
  const contact = [...CONTACT_COLOUR];
  assert.equal(hex(contact), contactHex);
  for (const c of [...slotPalette, groundHex]) {
    const other = hexRgb(c);
    // 40°: well beyond the 19° that separated the old contact red from the second slot's red
    const h = hue(other);
    if (h !== null) {
      const apart = Math.min(Math.abs(h - hue(contact)!), 360 - Math.abs(h - hue(contact)!));
      assert.ok(apart >= 40, `${c}: hue ${apart.toFixed(0)}° from the contacts'`);
    }
    // more than twice the pixel count's 0.04 window apart, so the viewer tests count no body pixel as a contact
    const [a, b] = [chroma(contact), chroma(other)];
    assert.ok(Math.max(Math.abs(a[0] - b[0]), Math.abs(a[1] - b[1])) > 0.08, `${c}: chromaticity too near the contacts'`);
  }
});

test('a plane is drawn as a square of its own surface under the bodies, outside the framing bounds; a ramp tilts with its orientation', () => {
  const pyramid = loadScene('pyramid', { base: 3 }).world as WorldDesc;
  const info = renderInfo(pyramid) as Drawable;
  assert.equal(info.drawable, true, (info as unknown as { reason?: string }).reason);
  assert.equal(info.shapes[0], SHAPE_PLANE, 'body 0, the ground, has no impostor');
  // the boxes' own bounds: centres ± bounding radius (√3 h for a cube of half extent h)
  const boxes = pyramid.bodies.slice(1);
  const r = Math.sqrt(3) * 0.5;
  const lo = [0, 1, 2].map((d) => Math.min(...boxes.map((b) => b.position[d])) - r);
  const hi = [0, 1, 2].map((d) => Math.max(...boxes.map((b) => b.position[d])) + r);
  const extent = Math.max(...[0, 1, 2].map((d) => hi[d] - lo[d]));
  // the ground (y = 0) lies within the boxes' bounds (they reach below it by r − h): the bounds are theirs
  for (let d = 0; d < 3; d++) {
    assert.ok(Math.abs(info.bounds.min[d] - lo[d]) < 1e-9 && Math.abs(info.bounds.max[d] - hi[d]) < 1e-9, `bounds ${JSON.stringify(info.bounds)} vs the boxes' ${lo}…${hi}`);
  }
  // six vertices (two triangles) on y = 0, normal +y, a square of half side 3 extents about the foot of the bounds' centre
  assert.equal(info.ground.length, 6 * GROUND_FLOATS);
  const centre = [0, 2].map((d) => (lo[d] + hi[d]) / 2);
  const half = GROUND_HALF_EXTENTS * extent;
  for (let v = 0; v < 6; v++) {
    const g = info.ground.subarray(GROUND_FLOATS * v, GROUND_FLOATS * (v + 1));
    assert.ok(Math.abs(g[1]) < 1e-6, `vertex ${v} off the plane: y = ${g[1]}`);
    assert.deepEqual(Array.from(g.subarray(3, 6)), [0, 1, 0]);
    assert.ok(Math.abs(Math.abs(g[0] - centre[0]) - half) < 1e-4 && Math.abs(Math.abs(g[2] - centre[1]) - half) < 1e-4, `vertex ${v} at (${g[0]}, ${g[2]})`);
    // the plane's own coordinates: local x, z from its position (the identity here)
    assert.ok(Math.abs(g[6] - g[0]) < 1e-5 && Math.abs(g[7] - g[2]) < 1e-5);
  }

  // the ramp: its square lies in its plane n · (p − x_P) = 0, n = R(q) e_y = (−sin θ, cos θ, 0), with that normal
  const angle = 0.3;
  const ramp = loadScene('friction-ramp', { angle }).world as WorldDesc;
  const ri = renderInfo(ramp) as Drawable;
  assert.equal(ri.ground.length, 2 * 6 * GROUND_FLOATS, 'the ground and the ramp');
  assert.equal(ri.shapes[SHAPE_FLOATS], SHAPE_PLANE);
  const n = [-Math.sin(angle), Math.cos(angle), 0];
  for (let v = 6; v < 12; v++) {
    const g = ri.ground.subarray(GROUND_FLOATS * v, GROUND_FLOATS * (v + 1));
    assert.ok(Math.abs(n[0] * g[0] + n[1] * g[1] + n[2] * g[2]) < 1e-5, `ramp vertex ${v} off its plane`);
    for (let d = 0; d < 3; d++) assert.ok(Math.abs(g[3 + d] - n[d]) < 1e-6, `ramp normal ${Array.from(g.subarray(3, 6))}`);
  }

  // the address: contacts=1 on, 0 off, anything else named and ignored; the page writes it back when on
  assert.equal(parseConfig('?scene=pyramid&contacts=1').contacts, true);
  assert.equal(parseConfig('?scene=pyramid&contacts=0').contacts, false);
  const bad = parseConfig('?scene=pyramid&contacts=yes');
  assert.equal(bad.contacts, false);
  assert.deepEqual(bad.problems, ['contacts=yes: expected 0 or 1']);
  assert.deepEqual(bad.params, {}, 'contacts is not taken for a scene parameter');
  const c = parseConfig('?scene=pyramid&base=3&contacts=1');
  assert.match(configQuery(c), /&contacts=1$/);
  assert.doesNotMatch(configQuery({ ...c, contacts: false }), /contacts/);
});

test('a contact scene runs: the ground is drawn, the heads-up line counts its contacts, and the contacts toggle (checkbox, key c, contacts=1) draws them', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  // a 3-box-base pyramid at rest: 3 boxes on the ground and 3 each on two below, four corners per face contact
  const expectedContacts = 4 * (3 + 2 * 3);
  // sleep=0: this test counts the boxes by their colour, which sleeping dims (the sleep test below)
  const { page, consoleErrors, outside } = await openPage(v.origin, '/?scene=pyramid&base=3&solver=pgs-cpu&contacts=1&sleep=0');
  try {
    const h = await waitForFrames(page, 'pgs-cpu', 20);
    // the contact solvers are offered, enabled for this scene
    for (const id of ['pgs-cpu', 'si-soft-cpu', 'softstep-cpu']) assert.equal(await page.isDisabled(`#solver option[value="${id}"]`), false, id);
    await page.click('#play');
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.state === 'paused');
    await page.waitForTimeout(400);
    const d = await hud(page);
    t.diagnostic(`pyramid: ${await page.textContent('#hud')}`);
    assert.equal(h.bodies, '7');
    assert.equal(d.status, 'running');
    assert.equal(Number(d.contacts), expectedContacts, `contacts ${d.contacts}`);
    assert.ok(Number(d.maxPenetration) >= 0 && Number(d.maxPenetration) < 0.005, `max penetration ${d.maxPenetration} m`);
    assert.equal(d.showContacts, 'true');
    assert.equal(d.contactsDrawn, d.contacts, 'a point per touching contact');
    assert.match((await page.textContent('#hud'))!, new RegExp(`${expectedContacts} contacts.*max penetration [\\d.e-]+ mm`, 's'));
    assert.equal(await page.isChecked('#show-contacts'), true);
    const [row] = await legend(page);

    const on = inspectImage(decodePng(await page.locator('#view').screenshot({ path: join(dir, 'viewer-contacts-on.png') })), [groundHex, contactHex, row.colour!]);
    t.diagnostic(`contacts on: ${JSON.stringify(on)}`);
    assert.ok(on.byColour[groundHex] > 20_000, `the ground: ${on.byColour[groundHex]} pixels`);
    assert.ok(on.byColour[row.colour!] > 2_000, `the boxes: ${on.byColour[row.colour!]} pixels`);
    assert.ok(on.byColour[contactHex] > 100, `contact points: ${on.byColour[contactHex]} pixels`);

    // key c: off, and the address drops it
    await page.locator('#view').click({ position: { x: 5, y: 300 } }); // focus on the page, not a control
    await page.keyboard.press('c');
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.showContacts === 'false');
    assert.equal(await page.isChecked('#show-contacts'), false);
    assert.equal(new URL(page.url()).searchParams.get('contacts'), null, page.url());
    await page.waitForTimeout(300);
    const off = inspectImage(decodePng(await page.locator('#view').screenshot({ path: join(dir, 'viewer-contacts-off.png') })), [groundHex, contactHex]);
    t.diagnostic(`contacts off: ${JSON.stringify(off)}`);
    assert.equal(off.byColour[contactHex], 0, 'no contact colour with contacts off');
    assert.ok(off.byColour[groundHex] > 20_000);

    // the checkbox: on again
    await page.check('#show-contacts');
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.showContacts === 'true');
    assert.equal(new URL(page.url()).searchParams.get('contacts'), '1', page.url());
    await page.waitForTimeout(300);
    const again = inspectImage(decodePng(await page.locator('#view').screenshot()), [contactHex]);
    assert.ok(again.byColour[contactHex] > 100, `contact points again: ${again.byColour[contactHex]} pixels`);
    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(outside, [], 'requests outside the server');
  } finally {
    await page.close();
  }

  // a bad value is named in the banner; contacts stay off, nothing of their colour
  const bad = await openPage(v.origin, '/?scene=single-box&solver=si-soft-cpu&contacts=yes&paused=1');
  try {
    await bad.page.waitForFunction(() => document.getElementById('hud')!.dataset.solver === 'si-soft-cpu', null, { timeout: 40_000 });
    assert.match((await bad.page.textContent('#notice'))!, /Ignored in the address: contacts=yes: expected 0 or 1/);
    assert.equal(await bad.page.isChecked('#show-contacts'), false);
    // falling from 1 m: nothing touches yet, but the ground is there
    const d = await hud(bad.page);
    assert.equal(d.contacts, '0');
    const seen = inspectImage(decodePng(await bad.page.locator('#view').screenshot()), [groundHex, contactHex]);
    assert.ok(seen.byColour[groundHex] > 20_000, `the ground: ${seen.byColour[groundHex]} pixels`);
    assert.equal(seen.byColour[contactHex], 0);
    assert.deepEqual(bad.consoleErrors, [], 'console errors');
  } finally {
    await bad.page.close();
  }
});

for (const id of ['jacobi-gpu', 'softstep-gpu', 'xpbd-gpu'])
test(`${id} runs a contact scene drawn from its own buffer: the pyramid stands, the heads-up line counts its contacts as under pgs-cpu, error-free (issue 23, item 8)`, async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  // the same base-3 pyramid at rest as above: 36 touching points (4 per face contact, 9 face contacts)
  // recomputed from the snapshot (metrics), whichever solver moved the boxes. The GPU solvers never sleep,
  // so every box keeps its colour.
  const expectedContacts = 4 * (3 + 2 * 3);
  const { page, consoleErrors, outside } = await openPage(v.origin, `/?scene=pyramid&base=3&solver=${id}&contacts=1`);
  try {
    // offered and enabled for a contact scene (it solves contacts now; other GPU solvers refuse them)
    assert.equal(await page.isDisabled(`#solver option[value="${id}"]`), false);
    // 90 s: SwiftShader in Chromium compiles the contact kernels before the first frame; xpbd-gpu's grew with
    // its stick and friction stages (2026-11-27: frame 12 at 40 s, then 6 steps/s)
    const h = await waitForFrames(page, id, 30, 90_000);
    await page.click('#play');
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.state === 'paused');
    await page.waitForTimeout(400);
    const d = await hud(page);
    t.diagnostic(`pyramid under ${id}: ${await page.textContent('#hud')}`);
    assert.equal(h.bodies, '7');
    assert.equal(d.status, 'running');
    assert.match(d.adapter!, /swiftshader/i);
    assert.ok(Number(d.frames) >= 30);
    const [row] = await legend(page);
    assert.equal(row.zeroCopy, 'true', 'drawn from the solver\'s own buffer, not uploaded from snapshots');
    // a pyramid that stands: every face contact still touching, none sunk past the slop (5 mm)
    assert.equal(Number(d.contacts), expectedContacts, `contacts ${d.contacts}`);
    assert.ok(Number(d.maxPenetration) >= 0 && Number(d.maxPenetration) < 0.005, `max penetration ${d.maxPenetration} m`);
    assert.equal(d.contactsDrawn, d.contacts, 'a point per touching contact');
    assert.match((await page.textContent('#hud'))!, new RegExp(`${id}: [\\d.]+ ms/step \\((GPU|wall)\\).*${expectedContacts} contacts.*max penetration [\\d.e-]+ mm`, 's'));
    // the picture: the ground, the boxes in the slot's colour (drawn from the GPU buffer), the contact points
    const on = inspectImage(decodePng(await page.locator('#view').screenshot({ path: join(dir, `viewer-${id}-contacts.png`) })), [groundHex, contactHex, row.colour!]);
    t.diagnostic(`${id} contacts: ${JSON.stringify(on)}`);
    assert.ok(on.byColour[groundHex] > 20_000, `the ground: ${on.byColour[groundHex]} pixels`);
    assert.ok(on.byColour[row.colour!] > 2_000, `the boxes: ${on.byColour[row.colour!]} pixels`);
    assert.ok(on.byColour[contactHex] > 100, `contact points: ${on.byColour[contactHex]} pixels`);
    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(outside, [], 'requests outside the server');
  } finally {
    await page.close();
  }
});

// --- sleeping -----------------------------------------------------------------------------------

/** An 8-bit hex colour for linear rgb in [0, 1] (the canvas shows the shader's output as is, as the palette's hexes). */
function hex(rgb: readonly number[]): string {
  return '#' + rgb.map((c) => Math.round(Math.min(1, Math.max(0, c)) * 255).toString(16).padStart(2, '0')).join('');
}

test('packPoses carries each body\'s sleep flag into its pose (1 asleep, 0 awake; no mask: all 0)', () => {
  const world = loadScene('pyramid', { base: 3 }).world as WorldDesc;
  const info = renderInfo(world) as Drawable;
  const n = world.bodies.length;
  const snap = {
    frame: 0, time: 0, bodyCount: n,
    position: Float64Array.from(world.bodies.flatMap((b) => b.position)),
    orientation: Float64Array.from(world.bodies.flatMap((b) => b.orientation ?? [0, 0, 0, 1])),
    linearVelocity: new Float64Array(3 * n), angularVelocity: new Float64Array(3 * n),
  };
  const out = new Float32Array(POSE_FLOATS * n).fill(NaN);
  info.packPoses(snap, out);
  for (let i = 0; i < n; i++) assert.equal(out[POSE_FLOATS * i + POSE_ASLEEP], 0, `body ${i}: no mask, awake`);
  const asleep = Uint8Array.from(world.bodies, (b, i) => (!b.fixed && i % 2 === 1 ? 1 : 0));
  info.packPoses({ ...snap, asleep }, out);
  for (let i = 0; i < n; i++) {
    assert.equal(out[POSE_FLOATS * i + POSE_ASLEEP], asleep[i], `body ${i}`);
    // the flag takes the free float: the position and orientation are still the snapshot's
    for (let d = 0; d < 3; d++) assert.equal(out[POSE_FLOATS * i + d], Math.fround(snap.position[3 * i + d]));
    for (let d = 0; d < 4; d++) assert.equal(out[POSE_FLOATS * i + 4 + d], Math.fround(snap.orientation[4 * i + d]));
  }
  // the dimmed colour: greyer (its channels closer together) and darker than the colour it comes from
  const c = [0x4c, 0x9a, 0xff].map((x) => x / 255);
  const dim = dimmedColour(c);
  const spreadOf = (v: number[]) => Math.max(...v) - Math.min(...v);
  assert.ok(spreadOf(dim) < 0.5 * spreadOf(c), `${dim} greyer than ${c}`);
  assert.ok(dim.every((x, k) => x < c[k] || c[k] === 0), `${dim} darker than ${c}`);
});

test('sleep=1: a settled pyramid falls asleep, the heads-up line counts 0 of 6 awake, and its boxes are drawn dimmed; with sleep=0 none is', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  // the base-3 pyramid starts at rest on the ground: an island sleeps once all its bodies stayed slow
  // for the sleep time (TIME_TO_SLEEP, 0.5 s, collision/islands.ts), so within ~1 s of simulated time
  const { page, consoleErrors, outside } = await openPage(v.origin, '/?scene=pyramid&base=3&solver=softstep-cpu&sleep=1&paused=1');
  try {
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.solver === 'softstep-cpu', null, { timeout: 40_000 });
    assert.equal(new URL(page.url()).searchParams.get('sleep'), '1', 'the address keeps sleep=1');
    await page.waitForTimeout(300);
    const d0 = await hud(page);
    assert.deepEqual([d0.awake, d0.dynamicBodies, d0.dimmed], ['6', '6', '0'], 'frame 0: every box awake, none dimmed');
    const [row] = await legend(page);
    const colour = row.colour!;
    const dimHex = hex(dimmedColour([1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16) / 255)));
    const awake = inspectImage(decodePng(await page.locator('#view').screenshot({ path: join(dir, 'viewer-sleep-awake.png') })), [colour, dimHex]);
    t.diagnostic(`awake: ${JSON.stringify(awake)}`);
    assert.ok(awake.byColour[colour] > 2_000, `the boxes in the solver's colour: ${awake.byColour[colour]} pixels`);

    await page.click('#play');
    await page.waitForFunction(() => {
      const d = document.getElementById('hud')!.dataset;
      return d.awake === '0' && d.dimmed === '6';
    }, null, { timeout: 40_000 });
    await page.click('#play');
    await page.waitForFunction(() => document.getElementById('hud')!.dataset.state === 'paused');
    await page.waitForTimeout(300);
    const d = await hud(page);
    t.diagnostic(`asleep: ${await page.textContent('#hud')}`);
    assert.equal(d.sleeps, 'true');
    assert.ok(Number(d.time) >= TIME_TO_SLEEP, `asleep at t = ${d.time} s: not before the sleep time ${TIME_TO_SLEEP} s`);
    assert.match((await page.textContent('#hud'))!, /awake 0\/6 bodies/);
    const [after] = await legend(page);
    assert.equal(after.awake, '0');
    // the picture: the same boxes (at rest, not moved) now in the dimmed colour, hardly any left in the solver's
    const asleep = inspectImage(decodePng(await page.locator('#view').screenshot({ path: join(dir, 'viewer-sleep-asleep.png') })), [colour, dimHex]);
    t.diagnostic(`asleep: ${JSON.stringify(asleep)}`);
    assert.ok(asleep.byColour[colour] < 0.05 * awake.byColour[colour], `solver's colour left: ${asleep.byColour[colour]} of ${awake.byColour[colour]} pixels`);
    assert.ok(asleep.byColour[dimHex] - awake.byColour[dimHex] > 0.5 * awake.byColour[colour], `dimmed pixels ${awake.byColour[dimHex]} → ${asleep.byColour[dimHex]}`);
    assert.deepEqual(consoleErrors, [], 'console errors');
    assert.deepEqual(outside, [], 'requests outside the server');
  } finally {
    await page.close();
  }

  // sleep=0: past the sleep time every box is still awake, none drawn dimmed, and no awake count is shown
  const off = await openPage(v.origin, '/?scene=pyramid&base=3&solver=softstep-cpu&sleep=0');
  try {
    const h = await waitForFrames(off.page, 'softstep-cpu', 45);
    assert.ok(Number(h.time) > TIME_TO_SLEEP, `t = ${h.time} s: past the sleep time`);
    assert.deepEqual([h.awake, h.dynamicBodies, h.sleeps, h.dimmed], ['6', '6', 'false', '0']);
    assert.doesNotMatch((await off.page.textContent('#hud'))!, /awake/);
    const [row] = await legend(off.page);
    assert.equal(row.dimmed, '0');
    assert.deepEqual(off.consoleErrors, [], 'console errors');
  } finally {
    await off.page.close();
  }
});

test('every ignored address setting is named even when the solver falls back, and the page gives no command-line advice (issue 22)', async (t) => {
  if (!haveBrowser(t)) return;
  const v = await viewer();
  // nosuch: no such solver (dropped; global-gpu is then the main one, and it refuses the cradle's contacts, its
  // solve being for equalities: the page falls back to the default contact solver); count=0 below the cradle's minimum; iterations=abc
  // not a number; beta=50 beyond the stable 2; iterations=abc and beta=50 were dropped silently, and the
  // fallback's line replaced the list of what was ignored
  const { page, consoleErrors } = await openPage(v.origin, '/?scene=newtons-cradle&count=0&solver=nosuch,global-gpu&iterations=abc&beta=50&steps=0');
  try {
    await waitForFrames(page, 'softstep-cpu', 2, 90_000);
    const notice = (await page.textContent('#notice')) ?? '';
    t.diagnostic(`banner: ${notice}`);
    assert.match(notice, /Ignored in the address/);
    for (const what of [/unknown solver 'nosuch'/, /count=0: parameter 'count' must be ≥ 1/, /iterations=abc: not a decimal number/, /beta=50: must be ≤ 2/, /steps=0: must be an integer in \[1, 256\]/, /global-gpu cannot run this scene .*softstep-cpu runs it instead/])
      assert.match(notice, what);
    // no command-line advice inside the page ("--param collisions=0", "--compliance")
    assert.doesNotMatch(notice, /--[a-z]/);
    assert.doesNotMatch((await page.textContent('#solver-description')) ?? '', /--[a-z]/);
    assert.deepEqual(consoleErrors, [], 'page errors');
  } finally {
    await page.close();
  }
});
