/**
 * The viewer page: controls built from the registries, the frame loop, the heads-up line,
 * the legend, the plots, scene files, and the no-WebGPU fallback.
 *
 * The frame loop (one requestAnimationFrame callback at a time; nothing else touches solvers):
 *   1. a requested restart (scene, parameters, solvers or options changed; reset): rebuild
 *   2. playing (or a single step asked for): every running slot steps `steps` frames
 *   3. every `plot every` frames: snapshots → metrics → divergence check → plots
 *   4. CPU solvers upload their snapshot; GPU solvers are drawn from their own buffers
 *   4½. contacts shown (the checkbox, key c, contacts=1): the main solver's contact points of the
 *      frame drawn (sim.ts ContactProbe), once per frame stepped
 *   5. draw (a body its CPU solver put to sleep dimmed: render-info.ts POSE_ASLEEP); the heads-up
 *      line and legend are refreshed about three times a second (awake/total bodies where the
 *      solver sleeps)
 * UI events only change settings and set `restartRequest`, so a solver is never destroyed
 * while one of its steps is in flight.
 */
import { scenes, findScene } from '../src/scenes/registry.js';
import { resolveSceneParams, type ParamValue, type SceneInfo } from '../src/scenes/scene.js';
import { solvers, findSolver, defaultSolverFor } from '../src/solvers/registry.js';
import { resolveOptions, solverOptionSpecs, type SolverInfo, type SolverOptions } from '../src/solvers/solver.js';
import type { Snapshot } from '../src/model/snapshot.js';
import { acquireGpu, NoGpuError, type GpuContext } from '../src/gpu/device.js';
import { parseAnySceneFile } from '../src/scenes/scene-file.js';
import { isParticleSystem, type SceneDesc } from '../src/model/scene-desc.js';
import { formatNumber as fmt, countText } from '../src/bench/table.js';
import { renderInfo, type Drawable } from './render-info.js';
import { Renderer, canvasTarget } from './renderer.js';
import { Slot } from './sim.js';
import type { WorldDesc } from '../src/model/world.js';
import { LivePlots } from './plots.js';
import { configQuery, defaultScene, parseConfig } from './config.js';

/** One colour per slot, in slot order (the first is the main solver): viewer/colours.ts. */
export { palette } from './colours.js';
import { palette } from './colours.js';
/** Alpha of each solver's spheres when several are overlaid. */
const OVERLAY_ALPHA = 0.5;
/** A contact normal is drawn this fraction of the scene's extent long. */
const CONTACT_NORMAL_FRACTION = 0.05;
/** Largest scene file read, bytes. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;

/** The options with a slider: [min, max, step]; the others are number fields under "more options". */
const sliders: Partial<Record<keyof SolverOptions, [number, number, number]>> = {
  iterations: [0, 64, 1],
  substeps: [1, 32, 1],
  dt: [1 / 480, 1 / 20, 1 / 4800],
  beta: [0, 2, 0.01],
  warmStart: [0, 1, 0.05],
  feedbackStiffness: [0, 400, 1],
  feedbackDamping: [0, 80, 0.5],
};

/** The options that mean something to a solver: a particle (Witkin) solver has no iterations, β or warm start; a rigid one no k_s, k_d; one that solves to a tolerance no iterations. */
function optionApplies(key: keyof SolverOptions, info: SolverInfo | undefined): boolean {
  return !info || info.reads.includes(key); // the solver's declaration (SolverInfo.reads)
}

/**
 * A message of the library's (written for the command line) in the page's words: no command-line
 * advice inside the page. `--param k=v` is the scene's control k, `--flag` the option control of that
 * name, and a remedy that exists only on the command line ("node --max-old-space-size raises it") is dropped.
 */
export function pageWords(text: string): string {
  return text
    .replace(/ \(node --[^)]*\)/g, '')
    .replace(/--param ([\w.]+=)/g, '$1')
    .replace(/--([a-z][a-z-]*)/g, '$1');
}

function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

/** Whether a slot's awake count is shown: a rigid scene whose solver sleeps (a sleep mask), or has bodies asleep. */
function showsAwake(s: Slot): boolean {
  const m = s.metrics;
  return m?.awake !== undefined && m.dynamicBodies !== undefined && (s.sleeps || m.awake < m.dynamicBodies);
}

/** Whether bodies of `desc` collide: a rigid world with collisions on (the default) and two bodies or more (as MetricsContext.contactsOf). */
function collides(desc: SceneDesc): boolean {
  if (isParticleSystem(desc)) return false;
  const w = desc as WorldDesc;
  return Array.isArray(w.bodies) && w.collisions !== false && w.bodies.length >= 2;
}

function hexToRgb(hex: string): number[] {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
}

interface FileScene {
  name: string;
  desc: SceneDesc;
  /** where it was read from (same origin), or null for a file from this computer */
  url: string | null;
}

interface Run {
  desc: SceneDesc;
  drawable: Drawable | null;
  /** why the scene is not drawn (a description the renderer cannot draw yet) */
  notDrawable: string | null;
  slots: Slot[];
}

const clockNames: Record<string, string> = { 'gpu-timestamp': 'GPU', wall: 'wall' };

export class App {
  private gpu: GpuContext | null = null;
  private renderer: Renderer | null = null;
  private plots: LivePlots;
  private files = new Map<string, FileScene>();
  private sceneKey = defaultScene.scene;
  /** the parameters given for the current built-in scene (unset ones take the scene's defaults) */
  private params: Record<string, ParamValue> = {};
  /** the main solver first, then the overlaid ones */
  private solverIds: string[] = [];
  private asked: Partial<SolverOptions> = {};
  private steps = 1;
  private sampleEvery = 0;
  private playing = true;
  /** draw the main solver's contact points and normals */
  private showContacts = false;
  private stepRequests = 0;
  private restartRequest: { reframe: boolean } | null = { reframe: true };
  private run: Run | null = null;
  private renderedFrames = 0;
  private framesSinceSample = 0;
  private lastHud = 0;
  private lastHudRendered = 0;
  /** wall ms per drawn frame (the whole loop: steps, samples, uploads, drawing), over the last heads-up window */
  private frameMs = NaN;
  /** GPU ms of the render pass (median over the last heads-up window; NaN without timestamp queries) */
  private drawMs = NaN;
  private gpuProblem: string | null = null;
  private restarts = 0;
  /** what the address asked for that the page ignored, until the first run's notice is replaced */
  private addressNotice = '';
  /** refresh the heads-up line on the next frame (after play/pause, a single step) */
  private hudDue = false;

  constructor() {
    this.plots = new LivePlots($('plot-violation'), $('plot-energy'));
  }

  async start(): Promise<void> {
    const config = parseConfig(location.search);
    this.params = config.params;
    this.solverIds = [...new Set(config.solvers)];
    this.asked = config.options;
    this.steps = Number.isFinite(config.steps) ? Math.max(1, Math.min(256, Math.round(config.steps))) : 1;
    this.playing = !config.paused;
    this.showContacts = config.contacts;
    const problems = [...config.problems];
    for (const id of this.solverIds) if (!findSolver(id)) problems.push(`unknown solver '${id}'`);
    this.solverIds = this.solverIds.filter((id) => findSolver(id));
    if (!this.solverIds.length) this.solverIds = ['jacobi-gpu'];

    await this.initGpu();
    if (config.file) {
      const key = await this.fetchSceneFile(config.file);
      this.sceneKey = key ?? defaultScene.scene;
      if (!key) this.params = { ...defaultScene.params };
    } else if (findScene(config.scene)) {
      this.sceneKey = config.scene;
      problems.push(...this.dropInvalidParams(findScene(config.scene)!));
    } else {
      problems.push(`unknown scene '${config.scene}'`);
      this.params = { ...defaultScene.params };
    }
    if (!this.gpu) {
      // GPU solvers cannot run: their CPU twins stand in
      this.solverIds = [...new Set(this.solverIds.map((id) => (findSolver(id)?.device === 'gpu' ? id.replace(/-gpu$/, '-cpu') : id)).filter((id) => findSolver(id)))];
      if (!this.solverIds.length) this.solverIds = ['jacobi-cpu'];
    }
    this.buildControls();
    this.bindEvents();
    // kept for the first run's notice: a solver that falls back adds its line, never replaces this one
    this.addressNotice = problems.length ? `Ignored in the address: ${problems.join('; ')}` : '';
    if (problems.length) this.notice(this.addressNotice);
    requestAnimationFrame(() => this.tick());
  }

  /**
   * The address's scene parameters that the scene refuses (unknown, out of range, not an integer),
   * each as 'name=value: why' for the "Ignored in the address" banner; they are dropped, so the page
   * runs the rest (and the address it writes back no longer has them).
   */
  private dropInvalidParams(scene: SceneInfo): string[] {
    const problems: string[] = [];
    for (const [name, value] of Object.entries(this.params)) {
      try {
        resolveSceneParams(scene, { [name]: value });
      } catch (e) {
        problems.push(`${name}=${String(value)}: ${(e as Error).message}`);
        delete this.params[name];
      }
    }
    return problems;
  }

  // ---- WebGPU -------------------------------------------------------------------------------

  private async initGpu(): Promise<void> {
    const canvas = $('view') as HTMLCanvasElement;
    try {
      if (!navigator.gpu) throw new NoGpuError('navigator.gpu is missing');
      this.gpu = await acquireGpu();
      this.gpu.device.lost.then((info) => {
        if (info.reason === 'destroyed') return;
        this.gpuProblem = `the GPU device was lost (${info.message}); reload the page`;
        this.playing = false;
        this.notice(this.gpuProblem);
      });
      this.gpu.device.addEventListener('uncapturederror', (e) => {
        // a bug, not a state of the simulation: shown once, and the loop stops using the device
        const message = (e as GPUUncapturedErrorEvent).error.message;
        if (this.gpuProblem) return;
        this.gpuProblem = `WebGPU error: ${message}`;
        console.error(this.gpuProblem);
        this.notice(this.gpuProblem);
        this.playing = false;
        this.updatePlayButton();
      });
      this.renderer = await Renderer.create(this.gpu, canvasTarget(this.gpu.device, canvas));
      this.bindCamera(canvas);
    } catch (e) {
      this.gpu = null;
      this.renderer = null;
      canvas.hidden = true;
      this.showNoWebGpu(e as Error);
    }
  }

  private showNoWebGpu(e: Error): void {
    const panel = $('no-webgpu');
    const missing = !navigator.gpu;
    panel.replaceChildren(
      el('h2', { textContent: missing ? 'This browser has no WebGPU' : 'WebGPU is here, but no GPU adapter could be used' }),
      el('p', {
        textContent: missing
          ? 'navigator.gpu is missing, so the 3-D view and the GPU solvers are off. The CPU solvers still run, with their numbers and plots.'
          : `${e instanceof NoGpuError ? 'The browser offered no adapter' : e.message}. The 3-D view and the GPU solvers are off; the CPU solvers still run.`,
      }),
      el('p', { textContent: 'To turn WebGPU on:' }),
      el(
        'ul',
        {},
        el('li', { textContent: 'Chrome or Edge 113 or newer on Windows, macOS and ChromeOS have it. On Linux, open chrome://flags, enable "Unsafe WebGPU Support" (#enable-unsafe-webgpu) and Vulkan (#enable-vulkan), and restart; or start it with --enable-unsafe-webgpu --enable-features=Vulkan.' }),
        el('li', { textContent: 'Without a GPU driver, Chrome can use its software adapter: --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader --enable-features=Vulkan --use-vulkan=swiftshader.' }),
        el('li', { textContent: 'Firefox: version 141 or newer on Windows; elsewhere Firefox Nightly with dom.webgpu.enabled = true in about:config.' }),
        el('li', { textContent: 'Safari: version 26 or newer, or Technology Preview (Develop → Feature Flags → WebGPU).' }),
        el('li', { textContent: 'WebGPU needs a secure page: https://, or http://localhost / 127.0.0.1 (what solverlab view serves). chrome://gpu says whether WebGPU is blocked and why.' }),
      ),
    );
    panel.hidden = false;
    document.body.dataset.webgpu = 'missing';
  }

  // ---- scenes ------------------------------------------------------------------------------

  private sceneInfo(): SceneInfo | null {
    return this.sceneKey.startsWith('file:') ? null : (findScene(this.sceneKey) ?? null);
  }

  private buildDesc(): SceneDesc {
    const file = this.files.get(this.sceneKey);
    if (file) return file.desc;
    const scene = this.sceneInfo();
    if (!scene) throw new Error(`unknown scene '${this.sceneKey}'`);
    const { params, vectors } = resolveSceneParams(scene, this.params);
    return scene.build(params, vectors);
  }

  /** A scene file's text → a scene choice, or its error on the page (never thrown). */
  private addSceneFile(name: string, text: string, url: string | null = null): string | null {
    const box = $('scene-error');
    try {
      const { world } = parseAnySceneFile(text); // the command line's schema and checks
      const key = `file:${name}`;
      this.files.set(key, { name, desc: world, url });
      box.hidden = true;
      box.textContent = '';
      return key;
    } catch (e) {
      box.textContent = `${name}: ${(e as Error).message}`;
      box.hidden = false;
      document.body.dataset.sceneError = box.textContent;
      return null;
    }
  }

  /** The scene file at `path` (this page's origin only). */
  private async fetchSceneFile(path: string): Promise<string | null> {
    const name = decodeURIComponent(path.split('/').pop() || path);
    const box = $('scene-error');
    let url: URL | null = null;
    try {
      url = new URL(path, location.href);
    } catch {
      // not a URL: refused below
    }
    if (!url || url.origin !== location.origin) {
      box.textContent = `${path}: only scene files from this page's own server are read`;
      box.hidden = false;
      return null;
    }
    try {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      return this.addSceneFile(name, await response.text(), path);
    } catch (e) {
      box.textContent = `${name}: could not be read (${(e as Error).message})`;
      box.hidden = false;
      return null;
    }
  }

  private async openLocalFile(file: File): Promise<void> {
    if (file.size > MAX_FILE_BYTES) {
      const box = $('scene-error');
      box.textContent = `${file.name}: ${(file.size / 2 ** 20).toFixed(0)} MiB is larger than the ${MAX_FILE_BYTES / 2 ** 20} MiB the viewer reads`;
      box.hidden = false;
      return;
    }
    const key = this.addSceneFile(file.name, await file.text());
    if (!key) return;
    this.sceneKey = key;
    this.fillSceneSelect();
    this.fillParams();
    this.requestRestart(true);
  }

  // ---- controls ----------------------------------------------------------------------------

  private buildControls(): void {
    this.fillSceneSelect();
    this.fillParams();
    this.fillSolvers(null);
    this.fillOptions();
    ($('steps') as HTMLInputElement).value = String(this.steps);
    ($('show-contacts') as HTMLInputElement).checked = this.showContacts;
    this.updatePlayButton();
  }

  private fillSceneSelect(): void {
    const select = $('scene') as HTMLSelectElement;
    select.replaceChildren(
      ...scenes.map((s) => el('option', { value: s.name, textContent: s.name, title: s.description })),
      ...[...this.files.entries()].map(([key, f]) => el('option', { value: key, textContent: `file: ${f.name}` })),
    );
    select.value = this.sceneKey;
    const scene = this.sceneInfo();
    $('scene-description').textContent = scene ? scene.description : 'a scene file';
  }

  private fillParams(): void {
    const box = $('params');
    const scene = this.sceneInfo();
    if (!scene) {
      box.replaceChildren();
      return;
    }
    const fields: HTMLElement[] = [];
    let resolved: { params: Record<string, number>; vectors: Record<string, number[]> };
    try {
      resolved = resolveSceneParams(scene, this.params);
    } catch {
      resolved = resolveSceneParams(scene, {});
    }
    for (const [name, spec] of Object.entries(scene.params)) {
      const input = el('input', { type: 'number', value: String(resolved.params[name]), title: spec.help, name });
      input.step = spec.integer ? '1' : 'any';
      if (spec.min !== undefined) input.min = String(spec.min);
      if (spec.max !== undefined) input.max = String(spec.max);
      input.dataset.param = name;
      fields.push(el('label', { title: spec.help }, name, input));
    }
    for (const [name, spec] of Object.entries(scene.vectorParams ?? {})) {
      const input = el('input', { type: 'text', value: resolved.vectors[name].join(','), title: `${spec.help} (numbers separated by commas)`, name });
      input.dataset.param = name;
      input.dataset.vector = '1';
      fields.push(el('label', { title: spec.help }, name, input));
    }
    fields.push(el('div', { id: 'param-error', className: 'field-error' }));
    box.replaceChildren(...fields);
  }

  /** The solver pickers; solvers that cannot run `desc` are disabled with the reason. */
  private fillSolvers(desc: SceneDesc | null): void {
    const reasons = new Map(solvers.map((s) => [s.id, this.unavailable(s, desc)]));
    const select = $('solver') as HTMLSelectElement;
    select.replaceChildren(
      ...solvers.map((s) => {
        const why = reasons.get(s.id);
        return el('option', { value: s.id, textContent: `${s.id} (${s.device})${why ? ' — unavailable' : ''}`, title: why ?? s.description, disabled: !!why && s.id !== this.solverIds[0] });
      }),
    );
    select.value = this.solverIds[0];
    const main = findSolver(this.solverIds[0]);
    const why = reasons.get(this.solverIds[0]);
    $('solver-description').textContent = why ? pageWords(`cannot run this scene: ${why}`) : (main?.description ?? '');
    const overlay = $('overlay');
    overlay.replaceChildren(
      ...solvers
        .filter((s) => s.id !== this.solverIds[0])
        .map((s) => {
          const why = reasons.get(s.id);
          const index = this.solverIds.indexOf(s.id);
          const box = el('input', { type: 'checkbox', checked: index > 0, disabled: !!why && index <= 0, value: s.id });
          box.dataset.solver = s.id;
          const swatch = el('span', { className: 'swatch' });
          swatch.style.background = index > 0 ? palette[index % palette.length] : 'transparent';
          return el('label', { className: why ? 'disabled' : '', title: why ?? s.description }, box, swatch, `${s.id}${why ? ' (cannot run this scene)' : ''}`);
        }),
    );
  }

  /** Why `info` cannot run here (no WebGPU, or its own unsupported(desc)), or null. */
  private unavailable(info: SolverInfo, desc: SceneDesc | null): string | null {
    if (info.device === 'gpu' && !this.gpu) return 'no WebGPU in this browser';
    if (!desc) return null;
    try {
      return info.unsupported?.(desc, this.asked) ?? null;
    } catch (e) {
      return (e as Error).message;
    }
  }

  private fillOptions(): void {
    const main = findSolver(this.solverIds[0]);
    const defaults = resolveOptions(main ?? {}, {});
    const rows = { main: [] as HTMLElement[], more: [] as HTMLElement[] };
    for (const [key, spec] of Object.entries(solverOptionSpecs) as [keyof SolverOptions, (typeof solverOptionSpecs)[keyof SolverOptions]][]) {
      if (!optionApplies(key, main)) continue;
      const value = this.asked[key];
      const number = el('input', { type: 'number', value: value === undefined ? '' : String(value), placeholder: fmt(defaults[key], 4), title: spec.help });
      number.step = spec.integer ? '1' : 'any';
      number.min = String(spec.min);
      if (spec.max !== undefined) number.max = String(spec.max);
      number.dataset.option = key;
      const reset = el('button', { type: 'button', textContent: '↺', title: `back to each solver's default (${main?.id ?? ''}: ${fmt(defaults[key], 4)})` });
      reset.dataset.reset = key;
      const range = sliders[key];
      if (range) {
        const slider = el('input', { type: 'range', min: String(range[0]), max: String(range[1]), step: String(range[2]), value: String(value ?? defaults[key]), title: spec.help });
        slider.dataset.slider = key;
        rows.main.push(el('div', { className: 'option', title: spec.help }, el('span', { textContent: spec.flag }), slider, number, reset));
      } else rows.more.push(el('div', { className: 'option', title: spec.help }, el('span', { textContent: spec.flag }), el('span'), number, reset));
    }
    $('options').replaceChildren(...rows.main);
    $('more-options').replaceChildren(...rows.more);
    const more = $('more-options').closest('details');
    if (more) more.hidden = rows.more.length === 0;
  }

  private bindEvents(): void {
    $('scene').addEventListener('change', (e) => {
      this.sceneKey = (e.target as HTMLSelectElement).value;
      this.params = this.sceneKey === defaultScene.scene ? { ...defaultScene.params } : {};
      $('scene-error').hidden = true;
      this.fillSceneSelect();
      this.fillParams();
      this.requestRestart(true);
    });
    $('params').addEventListener('change', (e) => this.guard(() => this.onParamChange(e.target as HTMLInputElement)));
    $('scene-file').addEventListener('change', (e) => {
      const input = e.target as HTMLInputElement;
      const file = input.files?.[0];
      if (file) this.guard(() => this.openLocalFile(file).finally(() => (input.value = '')));
    });
    $('solver').addEventListener('change', (e) => {
      const id = (e.target as HTMLSelectElement).value;
      this.solverIds = [id, ...this.solverIds.slice(1).filter((x) => x !== id)];
      this.fillOptions();
      this.requestRestart(false);
    });
    $('overlay').addEventListener('change', (e) => {
      const box = e.target as HTMLInputElement;
      const id = box.dataset.solver!;
      this.solverIds = box.checked ? [...this.solverIds.filter((x) => x !== id), id] : this.solverIds.filter((x) => x !== id);
      this.requestRestart(false);
    });
    const options = (e: Event) => this.guard(() => this.onOptionChange(e));
    $('options').addEventListener('change', options);
    $('more-options').addEventListener('change', options);
    $('options').addEventListener('input', (e) => {
      const slider = e.target as HTMLInputElement;
      const key = slider.dataset.slider;
      if (key) (slider.parentElement!.querySelector('input[type=number]') as HTMLInputElement).value = slider.value;
    });
    const reset = (e: Event) => {
      const key = (e.target as HTMLElement).dataset.reset as keyof SolverOptions | undefined;
      if (!key) return;
      delete this.asked[key];
      this.fillOptions();
      this.requestRestart(false);
    };
    $('options').addEventListener('click', reset);
    $('more-options').addEventListener('click', reset);
    $('play').addEventListener('click', () => this.togglePlay());
    $('step').addEventListener('click', () => this.stepOnce());
    $('reset').addEventListener('click', () => this.requestRestart(false));
    $('frame-view').addEventListener('click', () => this.renderer?.frameScene());
    $('show-contacts').addEventListener('change', (e) => this.setShowContacts((e.target as HTMLInputElement).checked));
    $('steps').addEventListener('change', (e) => {
      const input = e.target as HTMLInputElement;
      const v = Number(input.value);
      const ok = Number.isInteger(v) && v >= 1 && v <= 256;
      input.classList.toggle('invalid', !ok);
      if (ok) {
        this.steps = v;
        this.syncUrl();
      }
    });
    $('sample-every').addEventListener('change', (e) => {
      const input = e.target as HTMLInputElement;
      const v = Number(input.value);
      const ok = Number.isInteger(v) && v >= 0;
      input.classList.toggle('invalid', !ok);
      if (ok) this.sampleEvery = v;
    });
    window.addEventListener('keydown', (e) => {
      const t = e.target as HTMLElement;
      if (t.closest('input, select, textarea, button') || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === ' ') this.togglePlay();
      else if (e.key === 's' || e.key === '.') this.stepOnce();
      else if (e.key === 'r') this.requestRestart(false);
      else if (e.key === 'f') this.renderer?.frameScene();
      else if (e.key === 'c') this.setShowContacts(!this.showContacts);
      else return;
      e.preventDefault();
    });
    // scene files dropped anywhere on the page
    const overlay = $('drop-overlay');
    let depth = 0;
    window.addEventListener('dragenter', (e) => {
      if (!e.dataTransfer?.types.includes('Files')) return;
      depth++;
      overlay.hidden = false;
    });
    window.addEventListener('dragleave', () => {
      depth = Math.max(0, depth - 1);
      if (!depth) overlay.hidden = true;
    });
    window.addEventListener('dragover', (e) => e.preventDefault());
    window.addEventListener('drop', (e) => {
      e.preventDefault();
      depth = 0;
      overlay.hidden = true;
      const file = e.dataTransfer?.files?.[0];
      if (file) this.guard(() => this.openLocalFile(file));
    });
  }

  private onParamChange(input: HTMLInputElement): void {
    const name = input.dataset.param;
    const scene = this.sceneInfo();
    if (!name || !scene) return;
    const raw = input.value.trim();
    const value: ParamValue = input.dataset.vector ? raw.split(',').map((x) => (x.trim() === '' ? NaN : Number(x))) : raw === '' ? NaN : Number(raw);
    const given = { ...this.params, [name]: value };
    const error = $('param-error');
    try {
      resolveSceneParams(scene, given);
    } catch (e) {
      input.classList.add('invalid');
      error.textContent = (e as Error).message;
      return;
    }
    input.classList.remove('invalid');
    error.textContent = '';
    this.params = given;
    this.requestRestart(true);
  }

  private onOptionChange(e: Event): void {
    const input = e.target as HTMLInputElement;
    const key = (input.dataset.option ?? input.dataset.slider) as keyof SolverOptions | undefined;
    if (!key) return;
    const spec = solverOptionSpecs[key];
    const number = input.dataset.option ? input : (input.parentElement!.querySelector('input[type=number]') as HTMLInputElement);
    const raw = input.value.trim();
    if (raw === '') {
      delete this.asked[key];
    } else {
      const v = Number(raw);
      const problem = !Number.isFinite(v)
        ? 'a number'
        : spec.integer && !Number.isInteger(v)
          ? 'an integer'
          : v < spec.min
            ? `≥ ${spec.min}`
            : spec.max !== undefined && v > spec.max
              ? `≤ ${spec.max}`
              : null;
      number.classList.toggle('invalid', !!problem);
      number.title = problem ? `${spec.flag} must be ${problem}` : spec.help;
      if (problem) return;
      this.asked[key] = v;
      number.value = String(v);
    }
    this.requestRestart(false);
  }

  private togglePlay(): void {
    this.playing = !this.playing;
    this.hudDue = true;
    this.updatePlayButton();
    this.syncUrl();
  }

  private setShowContacts(on: boolean): void {
    this.showContacts = on;
    ($('show-contacts') as HTMLInputElement).checked = on;
    this.hudDue = true;
    this.syncUrl();
  }

  private stepOnce(): void {
    this.playing = false;
    this.stepRequests++;
    this.hudDue = true;
    this.updatePlayButton();
  }

  private updatePlayButton(): void {
    $('play').textContent = this.playing ? 'Pause' : 'Play';
    document.body.dataset.state = this.playing ? 'playing' : 'paused';
  }

  private requestRestart(reframe: boolean): void {
    this.restartRequest = { reframe: reframe || !!this.restartRequest?.reframe };
  }

  private bindCamera(canvas: HTMLCanvasElement): void {
    let drag: { x: number; y: number; pan: boolean } | null = null;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.button !== 0 || e.shiftKey };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!drag || !this.renderer) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX;
      drag.y = e.clientY;
      if (drag.pan) this.renderer.camera.pan(dx, dy, canvas.clientHeight);
      else this.renderer.camera.orbit(dx, dy);
    });
    const end = () => (drag = null);
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
    canvas.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        this.renderer?.camera.zoom(e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY);
      },
      { passive: false },
    );
  }

  // ---- the run -----------------------------------------------------------------------------

  private async restart(reframe: boolean): Promise<void> {
    // a notice belongs to the run it was about (the first run keeps what the address said)
    if (this.restarts++ > 0 && !this.gpuProblem) {
      this.addressNotice = '';
      this.notice('');
    }
    for (const s of this.run?.slots ?? []) s.destroy();
    this.run = null;
    let desc: SceneDesc;
    try {
      desc = this.buildDesc();
    } catch (e) {
      $('param-error').textContent = (e as Error).message;
      this.renderer?.clearScene();
      this.fillSolvers(null);
      return;
    }
    const info = renderInfo(desc);
    const drawable = info.drawable ? info : null;
    if (this.renderer) {
      if (drawable) this.renderer.setScene(drawable, reframe);
      else this.renderer.clearScene();
    }
    // a main solver that cannot run this scene gives way to the one `solverlab run` would pick, else any that can
    const main = findSolver(this.solverIds[0])!;
    const whyNot = this.unavailable(main, desc);
    if (whyNot) {
      const runnable = solvers.filter((s) => !this.unavailable(s, desc));
      // the one `solverlab run` picks (registry defaultSolverFor), then the CPU references
      const preferred = [defaultSolverFor(desc), ...(collides(desc) ? ['pgs-cpu', 'jacobi-cpu'] : ['jacobi-cpu'])];
      const next = preferred.map((id) => runnable.find((s) => s.id === id)).find((s) => s) ?? runnable[0];
      if (next) {
        this.solverIds = [next.id, ...this.solverIds.filter((id) => id !== next.id && id !== main.id)];
        this.notice([this.addressNotice, `${main.id} cannot run this scene (${whyNot}): ${next.id} runs it instead`].filter(Boolean).join(' — '));
        this.fillOptions();
      }
    }
    this.fillSolvers(desc);
    const slots = this.solverIds.map((id, i) => new Slot(findSolver(id)!, hexToRgb(palette[i % palette.length]), this.asked));
    const alpha = slots.length > 1 ? OVERLAY_ALPHA : 1;
    for (const slot of slots) {
      const why = this.unavailable(slot.info, desc);
      if (why) slot.fail(`cannot run this scene: ${why}`);
      else await slot.start(desc, drawable, this.gpu, drawable ? this.renderer : null, alpha);
    }
    this.run = { desc, drawable, notDrawable: info.drawable ? null : info.reason, slots };
    this.framesSinceSample = 0;
    this.plots.reset(slots.map((s, i) => ({ label: s.info.id, colour: palette[i % palette.length] })));
    this.plots.push(0, slots.map((s) => (s.metrics ? { violation: s.metrics.maxViolation, energy: s.metrics.energy } : null)));
    document.body.dataset.runs = String(this.restarts);
    this.syncUrl();
    this.updateHud(true);
  }

  /** Frames between metric samples: the user's, else fewer readbacks for bigger scenes. */
  private sampleInterval(run: Run): number {
    if (this.sampleEvery > 0) return this.sampleEvery;
    const n = run.drawable?.bodyCount ?? 0;
    return n <= 2_000 ? 1 : n <= 20_000 ? 4 : n <= 200_000 ? 15 : 30;
  }

  private async tick(): Promise<void> {
    try {
      if (this.restartRequest) {
        const { reframe } = this.restartRequest;
        this.restartRequest = null;
        await this.restart(reframe);
      }
      const run = this.run;
      if (run && !this.gpuProblem) {
        const stepping = this.playing || this.stepRequests > 0;
        if (stepping) {
          const frames = this.playing ? this.steps : 1;
          if (!this.playing) this.stepRequests--;
          for (const s of run.slots) await s.step(frames);
          this.framesSinceSample++;
        }
        const snaps = stepping && (this.framesSinceSample >= this.sampleInterval(run) || !this.playing) ? await this.sample(run) : null;
        if (this.renderer && run.drawable) {
          const uploaded: (Snapshot | undefined)[] = [];
          for (let i = 0; i < run.slots.length; i++) uploaded.push(await run.slots[i].upload(this.renderer, run.drawable, snaps?.[i]));
          const main = run.slots[0];
          if (this.showContacts && main?.draw) {
            if (main.active) await main.updateContacts(this.contactLength(run.drawable), uploaded[0]);
            this.renderer.setContacts(main.contactLines);
          } else this.renderer.setContacts(null);
          const draws = run.slots.flatMap((s) => (s.draw ? [s.draw] : []));
          this.renderer.draw(draws, { joints: ($('show-joints') as HTMLInputElement).checked, translucent: draws.length > 1 });
        } else this.renderer?.draw([], { joints: false, translucent: false });
      }
      this.renderedFrames++;
      const due = this.hudDue;
      this.hudDue = false;
      this.updateHud(due);
    } catch (e) {
      console.error(e);
      this.notice(`The viewer stopped: ${(e as Error).message}`);
      this.playing = false;
      this.updatePlayButton();
    }
    requestAnimationFrame(() => this.tick());
  }

  /** The length of a drawn contact normal: a fraction of the scene's extent (its bounds at the start). */
  private contactLength(d: Drawable): number {
    const { min, max } = d.bounds;
    return CONTACT_NORMAL_FRACTION * Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2], 1e-3);
  }

  private async sample(run: Run) {
    this.framesSinceSample = 0;
    const snaps: (Snapshot | undefined)[] = [];
    let t = -Infinity;
    for (const s of run.slots) {
      const snap = await s.sample();
      snaps.push(snap);
      if (snap) t = Math.max(t, snap.time);
    }
    if (Number.isFinite(t)) this.plots.push(t, run.slots.map((s, i) => (snaps[i] && s.metrics ? { violation: s.metrics.maxViolation, energy: s.metrics.energy } : null)));
    return snaps;
  }

  // ---- what the page shows -----------------------------------------------------------------

  private notice(text: string): void {
    const box = $('notice');
    box.textContent = pageWords(text);
    box.hidden = !text;
  }

  private syncUrl(): void {
    const file = this.files.get(this.sceneKey);
    // a file from this computer has no address: the URL keeps the rest
    const query = configQuery({
      scene: file ? '' : this.sceneKey,
      file: file?.url ?? null,
      params: file ? {} : this.params,
      solvers: this.solverIds,
      options: this.asked,
      steps: this.steps,
      paused: !this.playing,
      contacts: this.showContacts,
    });
    history.replaceState(null, '', query);
  }

  private updateHud(force: boolean): void {
    const now = performance.now();
    if (!force && now - this.lastHud < 300) return;
    if (now > this.lastHud && this.renderedFrames > this.lastHudRendered) this.frameMs = (now - this.lastHud) / (this.renderedFrames - this.lastHudRendered);
    this.lastHud = now;
    this.lastHudRendered = this.renderedFrames;
    const hud = $('hud');
    const run = this.run;
    const main = run?.slots[0];
    for (const s of run?.slots ?? []) s.updateTimings();
    const passes = this.renderer?.drawTimings() ?? [];
    if (passes.length) this.drawMs = passes.sort((a, b) => a - b)[Math.floor((passes.length - 1) / 2)];
    const d = hud.dataset;
    d.adapter = this.gpu ? this.gpu.adapterName : 'none';
    d.software = String(!!this.gpu?.software);
    d.scene = this.sceneKey;
    d.bodies = String(main?.solver?.bodyCount ?? run?.drawable?.bodyCount ?? 0);
    d.constraints = String(main?.solver?.constraintCount ?? run?.drawable?.jointCount ?? 0);
    d.solvers = run?.slots.map((s) => s.info.id).join(',') ?? '';
    d.solver = main?.info.id ?? '';
    d.status = main?.status ?? '';
    d.frames = String(main?.frame ?? 0);
    d.time = String(main?.time ?? 0);
    d.msPerStep = String(main?.msPerStep ?? NaN);
    d.clock = main?.clock ?? '';
    d.stepsPerSecond = String(main?.stepsPerSecond ?? NaN);
    d.rendered = String(this.renderedFrames);
    d.state = this.playing ? 'playing' : 'paused';
    d.frameMs = String(this.frameMs);
    d.drawMs = String(this.drawMs);
    // contacts (scenes with collisions): the metrics' count and deepest penetration, and the points drawn
    const m = main?.metrics;
    d.contacts = m?.contacts === undefined ? '' : String(m.contacts);
    d.maxPenetration = m?.maxPenetration === undefined ? '' : String(m.maxPenetration);
    d.showContacts = String(this.showContacts);
    d.contactsDrawn = String(this.showContacts && main?.contactLines ? main.contactLines.length / 6 : 0);
    // sleeping (rigid scenes): the dynamic bodies awake by the metrics (Snapshot.asleep), of all, and
    // the bodies drawn dimmed (flagged asleep in the poses the renderer got)
    d.awake = m?.awake === undefined ? '' : String(m.awake);
    d.dynamicBodies = m?.dynamicBodies === undefined ? '' : String(m.dynamicBodies);
    d.sleeps = String(!!main?.sleeps);
    d.dimmed = String(main?.dimmed ?? 0);
    const sep = () => el('span', { className: 'sep', textContent: '·' });
    const parts: (string | Node)[] = [
      `adapter: ${this.gpu ? `${this.gpu.adapterName}${this.gpu.software ? ' [software]' : ''}` : 'none (no WebGPU)'}`,
      sep(),
      countText(Number(d.bodies), 'body', 'bodies'),
      sep(),
      countText(Number(d.constraints), 'constraint'),
    ];
    if (main) {
      parts.push(sep(), `${main.info.id}: ${fmt(main.msPerStep)} ms/step (${clockNames[main.clock] ?? main.clock})`, sep(), `${fmt(main.stepsPerSecond)} steps/s`, sep(), `frame ${main.frame}`, sep(), `t = ${main.time.toFixed(2)} s`);
      if (m?.contacts !== undefined) parts.push(sep(), countText(m.contacts, 'contact'), sep(), `max penetration ${fmt((m.maxPenetration ?? 0) * 1000)} mm`);
      // awake/total where the solver sleeps (sleep=1 and the like); elsewhere every body is awake
      if (showsAwake(main)) parts.push(sep(), `awake ${m!.awake}/${countText(m!.dynamicBodies!, 'body', 'bodies')}`);
      if (main.status === 'diverged' || main.status === 'failed') parts.push(sep(), el('span', { className: 'error', textContent: main.status === 'diverged' ? 'DIVERGED' : 'FAILED' }));
    }
    if (Number.isFinite(this.drawMs)) parts.push(sep(), `draw ${fmt(this.drawMs)} ms (GPU)`);
    parts.push(sep(), `${fmt(this.frameMs)} ms/frame`);
    if (run?.notDrawable) parts.push(sep(), run.notDrawable);
    // each part on one line, the line wrapping between parts (never cut off: style.css #hud)
    hud.replaceChildren(...parts.map((p) => (typeof p === 'string' ? el('span', { className: 'part', textContent: p }) : p)));
    this.updateLegend();
  }

  private updateLegend(): void {
    const legend = $('legend');
    const run = this.run;
    if (!run) {
      legend.replaceChildren();
      return;
    }
    const rows: HTMLElement[] = run.slots.map((s, i) => {
      const swatch = el('span', { className: 'swatch' });
      swatch.style.background = palette[i % palette.length];
      const m = s.metrics;
      const text =
        s.status === 'running'
          ? `${s.info.id} · ${fmt(s.msPerStep)} ms/step (${clockNames[s.clock] ?? s.clock}) · max |c| ${fmt(m?.maxViolation)} m · E ${fmt(m?.energy)} J${m?.contacts !== undefined ? ` · ${countText(m.contacts, 'contact')}, pen ${fmt((m.maxPenetration ?? 0) * 1000)} mm` : ''}${showsAwake(s) ? ` · awake ${m!.awake}/${m!.dynamicBodies}` : ''}${s.draw && !s.zeroCopy ? ' · drawn from snapshots' : ''}`
          : s.status === 'starting'
            ? `${s.info.id} · starting`
            : `${s.info.id} · ${s.status === 'diverged' ? '' : 'failed: '}${s.reason}`;
      const row = el('div', { className: 'slot' }, swatch, text);
      const d = row.dataset;
      d.solver = s.info.id;
      d.colour = palette[i % palette.length];
      d.status = s.status;
      d.frame = String(s.frame);
      d.msPerStep = String(s.msPerStep);
      d.clock = s.clock;
      d.maxViolation = String(m?.maxViolation ?? NaN);
      d.energy = String(m?.energy ?? NaN);
      if (m?.contacts !== undefined) {
        d.contacts = String(m.contacts);
        d.maxPenetration = String(m.maxPenetration ?? 0);
      }
      if (m?.awake !== undefined) {
        d.awake = String(m.awake);
        d.dimmed = String(s.dimmed);
      }
      d.zeroCopy = String(s.zeroCopy);
      if (s.reason) d.reason = s.reason;
      return row;
    });
    if (run.notDrawable) rows.push(el('div', { className: 'slot', textContent: `${run.notDrawable}: the numbers and plots still run` }));
    legend.replaceChildren(...rows);
  }

  /** Runs an event handler; whatever it throws is shown, not lost. */
  private guard(f: () => unknown): void {
    try {
      const r = f();
      if (r instanceof Promise) r.catch((e) => this.fault(e));
    } catch (e) {
      this.fault(e);
    }
  }

  private fault(e: unknown): void {
    console.error(e);
    this.notice(`Error: ${(e as Error)?.message ?? String(e)}`);
  }
}
