/**
 * Live plots (uPlot): max constraint violation (log y) and total energy against simulated time,
 * one line per solver in the solver's colour. Points are the viewer's metric samples; a slot that
 * stopped (diverged, failed) leaves gaps (null) from then on. The newest MAX_POINTS are kept.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const MAX_POINTS = 3000;

/** Axis numbers: short, e-notation for the very small and very large. */
function tickLabel(v: number | null): string {
  if (v === null || v === undefined) return '';
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a < 1e-2 || a >= 1e5 ? v.toExponential(0) : String(Number(v.toPrecision(3)));
}

/** Powers of ten from min to max (at least two). */
function decades(min: number, max: number): number[] {
  if (!(min > 0) || !(max > 0)) return [];
  let lo = Math.floor(Math.log10(min)), hi = Math.ceil(Math.log10(max));
  if (hi === lo) hi++;
  const step = Math.max(1, Math.ceil((hi - lo) / 6));
  const out: number[] = [];
  for (let k = lo; k <= hi; k += step) out.push(10 ** k);
  return out;
}

export interface PlotLine {
  label: string;
  colour: string;
}

interface Chart {
  plot: uPlot;
  el: HTMLElement;
  /** y per line, aligned with xs */
  ys: (number | null)[][];
}

export class LivePlots {
  private xs: number[] = [];
  private charts: Chart[] = [];
  private observer: ResizeObserver;

  constructor(
    private readonly violationEl: HTMLElement,
    private readonly energyEl: HTMLElement,
  ) {
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(violationEl);
    this.observer.observe(energyEl);
  }

  /** New lines (a new run): the old plots and their data go. */
  reset(lines: PlotLine[]): void {
    for (const c of this.charts) c.plot.destroy();
    this.xs = [];
    this.charts = [
      this.make(this.violationEl, 'max violation (m)', lines, true),
      this.make(this.energyEl, 'energy (J)', lines, false),
    ];
    this.violationEl.dataset.lines = String(lines.length);
    this.energyEl.dataset.lines = String(lines.length);
  }

  private size(el: HTMLElement): { width: number; height: number } {
    return { width: Math.max(200, el.clientWidth), height: Math.max(120, el.clientHeight - 8) };
  }

  private make(el: HTMLElement, label: string, lines: PlotLine[], log: boolean): Chart {
    const ys = lines.map(() => [] as (number | null)[]);
    const axis = { stroke: '#b8c0cc', grid: { stroke: '#2b313a', width: 1 }, ticks: { stroke: '#2b313a', width: 1 } };
    const opts: uPlot.Options = {
      ...this.size(el),
      title: label,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false }, y: log ? { distr: 3, log: 10 } : { auto: true } },
      axes: [
        { ...axis, label: 'time (s)' },
        {
          ...axis,
          size: 64,
          values: (_u: uPlot, ticks: number[]) => ticks.map((v) => tickLabel(v)),
          // a log axis: one line per decade (uPlot's default adds 2…9 × each decade)
          ...(log ? { splits: (_u: uPlot, _i: number, min: number, max: number) => decades(min, max) } : {}),
        },
      ],
      series: [{ label: 't' }, ...lines.map((l) => ({ label: l.label, stroke: l.colour, width: 1.5, spanGaps: false, points: { show: false } }))],
    };
    const plot = new uPlot(opts, [this.xs, ...ys] as uPlot.AlignedData, el);
    return { plot, el, ys };
  }

  /** One sample: the time and each line's (violation, energy); null where the line has none. */
  push(t: number, values: ({ violation: number; energy: number } | null)[]): void {
    this.xs.push(t);
    const [violation, energy] = this.charts;
    values.forEach((v, i) => {
      // a log axis cannot show 0 or a negative number: a gap
      violation.ys[i].push(v && Number.isFinite(v.violation) && v.violation > 0 ? v.violation : null);
      energy.ys[i].push(v && Number.isFinite(v.energy) ? v.energy : null);
    });
    if (this.xs.length > MAX_POINTS) {
      this.xs.shift();
      for (const c of this.charts) for (const y of c.ys) y.shift();
    }
    for (const c of this.charts) c.plot.setData([this.xs, ...c.ys] as uPlot.AlignedData);
    this.violationEl.dataset.points = String(this.xs.length);
    this.energyEl.dataset.points = String(this.xs.length);
  }

  private resize(): void {
    for (const c of this.charts) c.plot.setSize(this.size(c.el));
  }
}
