/**
 * Argument parsing for the `solverlab` command. Every fault is a UsageError:
 * one line, exit status 2, nothing run.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface FlagSpec {
  /** takes a value (else a boolean switch) */
  value: boolean;
  /** may be given more than once (values collected) */
  repeat?: boolean;
}

export interface Parsed {
  command: string;
  flags: Map<string, string[]>;
}

export function parseArgs(argv: string[], commands: Record<string, Record<string, FlagSpec>>): Parsed {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') return { command: 'help', flags: new Map() };
  if (command === '--version' || command === '-v') return { command: 'version', flags: new Map() };
  const specs = commands[command];
  if (!specs) throw new UsageError(`unknown command '${command}' (commands: ${Object.keys(commands).join(', ')})`);
  const flags = new Map<string, string[]>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}' (options start with --)`);
    let name = arg.slice(2);
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    if (name === 'help') return { command: 'help', flags: new Map([['command', [command]]]) };
    const spec = specs[name];
    if (!spec) throw new UsageError(`unknown option '--${name}' for '${command}' (options: ${Object.keys(specs).map((k) => '--' + k).join(', ')})`);
    if (spec.value) {
      if (value === undefined) {
        value = rest[++i];
        if (value === undefined) throw new UsageError(`option '--${name}' needs a value`);
      }
    } else {
      if (value !== undefined) throw new UsageError(`option '--${name}' takes no value`);
      value = 'true';
    }
    const list = flags.get(name) ?? [];
    if (list.length && !spec.repeat) throw new UsageError(`option '--${name}' given twice`);
    list.push(value);
    flags.set(name, list);
  }
  return { command, flags };
}

/** A finite number, optionally an integer, within [min, max]. */
export function numberFlag(name: string, raw: string, opts: { integer?: boolean; min?: number; max?: number } = {}): number {
  const v = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(v)) throw new UsageError(`--${name} must be a number, got '${raw}'`);
  if (opts.integer && !Number.isInteger(v)) throw new UsageError(`--${name} must be an integer, got '${raw}'`);
  if (opts.min !== undefined && v < opts.min) throw new UsageError(`--${name} must be ≥ ${opts.min}, got ${raw}`);
  if (opts.max !== undefined && v > opts.max) throw new UsageError(`--${name} must be ≤ ${opts.max}, got ${raw}`);
  return v;
}

/** `--param k=v` pairs → { k: v }: a number, or a vector for `k=x,y[,z]`. */
export function paramFlags(values: string[]): Record<string, number | number[]> {
  const out: Record<string, number | number[]> = {};
  for (const kv of values) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param expects NAME=VALUE, got '${kv}'`);
    const k = kv.slice(0, eq);
    const raw = kv.slice(eq + 1);
    const parts = raw.split(',').map((x) => (x.trim() === '' ? NaN : Number(x)));
    if (!parts.every(Number.isFinite)) throw new UsageError(`--param ${k} must be a number or numbers separated by commas, got '${raw}'`);
    if (k in out) throw new UsageError(`--param ${k} given twice`);
    out[k] = parts.length === 1 ? parts[0] : parts;
  }
  return out;
}

/** `0,5,12` → [0, 5, 12] */
export function indexList(name: string, raw: string): number[] {
  return raw.split(',').map((s) => numberFlag(name, s, { integer: true, min: 0 }));
}
