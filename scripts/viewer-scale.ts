// The viewer at scale: serves the necklace (CHAINS × 40 beads) under SOLVER, opens it in headless Chromium
// (SwiftShader WebGPU) and waits for two frames, printing the heads-up line's data or the error.
//   node --import tsx scripts/viewer-scale.ts [CHAINS (6250)] [SOLVER (jacobi-gpu)]
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
const chains = process.argv[2] ?? '6250';
const solver = process.argv[3] ?? 'jacobi-gpu';
const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'view', '--port', '0', '--scene', 'necklace', '--param', `chains=${chains}`, '--solver', solver], { stdio: ['ignore', 'pipe', 'inherit'] });
const url: string = await new Promise((ok) => server.stdout!.on('data', (d) => { const m = /viewer: (\S+)/.exec(String(d)); if (m) ok(m[1]); }));
console.log('url', url);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless=new', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader', '--use-angle=swiftshader'] });
const page = await browser.newPage({ viewport: { width: 960, height: 640 } });
page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') console.log('console', m.type(), m.text().slice(0, 300)); });
page.on('pageerror', (e) => console.log('pageerror', String(e).slice(0, 300)));
page.on('crash', () => console.log('PAGE CRASHED'));
const t0 = Date.now();
await page.goto(url);
try {
  await page.waitForFunction(() => Number(document.getElementById('hud')!.dataset.frames) >= 2 || !document.getElementById('scene-error')!.hidden, undefined, { timeout: 300_000, polling: 1000 });
} catch (e) { console.log('timeout', String(e).slice(0, 200)); }
console.log('after', (Date.now() - t0) / 1000, 's', JSON.stringify(await page.evaluate(() => ({ ...document.getElementById('hud')!.dataset, err: document.getElementById('scene-error')!.hidden ? '' : document.getElementById('scene-error')!.textContent }))).slice(0, 600));
await browser.close();
server.kill();
