/**
 * Argument parsing for the `solverlab` command, on node:util's parseArgs (its tokens; our own
 * checks and messages). Every fault is a UsageError: one line, exit status 2, nothing run.
 *
 * One table: each command's flags are a Record<string, FlagSpec> (src/cli/main.ts); the parser
 * reads it, and `--help` is generated from it (commandHelp), so a flag cannot be accepted without
 * being listed, or listed without being accepted.
 *
 * Numbers on the command line are decimal: 12, -3, 0.5, 1e-4. Hexadecimal, octal and binary
 * literals (0x10, 0o7, 0b1), digit separators (1_000), 'Infinity' and empty strings are refused
 * with one line naming the flag (JavaScript's Number() would take most of them).
 */
import { parseArgs as nodeParseArgs } from 'node:util';
import { brokenBound, type NumberRange } from '../model/ranges.js';

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
  /** one line for --help (what it does, its default) */
  help?: string;
  /** the value's placeholder in --help, e.g. 'N', 'FILE' (default 'VALUE') */
  arg?: string;
}

/** A command: what it does (one line for the overview) and its flags. */
export interface CommandSpec {
  summary: string;
  /** extra lines for the command's --help (usage forms, notes), shown above the options */
  usage?: string[];
  flags: Record<string, FlagSpec>;
}

export interface Parsed {
  command: string;
  flags: Map<string, string[]>;
}

/** The flags `argv` (after the command) sets, checked against `specs`. */
function parseFlags(command: string, rest: string[], specs: Record<string, FlagSpec>): Map<string, string[]> | 'help' {
  // strict: false hands back every token, known or not, so each fault gets our own one-line message
  const options = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [name, { type: spec.value ? ('string' as const) : ('boolean' as const), multiple: true }]),
  );
  const { tokens } = nodeParseArgs({ args: rest, options, strict: false, allowPositionals: true, tokens: true });
  const flags = new Map<string, string[]>();
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t];
    if (tok.kind === 'option-terminator') {
      const next = tokens[t + 1];
      throw new UsageError(next && next.kind === 'positional' ? `unexpected argument '${next.value}' (options start with --)` : "unexpected argument '--'");
    }
    if (tok.kind === 'positional') throw new UsageError(`unexpected argument '${tok.value}' (options start with --)`);
    const { name, rawName } = tok;
    if (name === 'help' || rawName === '-h') return 'help';
    if (!rawName.startsWith('--')) throw new UsageError(`unexpected argument '${rest[tok.index]}' (options start with --)`);
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (!spec) throw new UsageError(`unknown option '--${name}' for '${command}' (options: ${Object.keys(specs).map((k) => '--' + k).join(', ')})`);
    let value: string;
    if (spec.value) {
      if (tok.value === undefined) throw new UsageError(`option '--${name}' needs a value`);
      // `--frames --quiet`: the next option is not a value (a negative number is)
      if (!tok.inlineValue && /^--[a-z]/i.test(tok.value)) throw new UsageError(`option '--${name}' needs a value (got the option '${tok.value}')`);
      value = tok.value;
    } else {
      if (tok.value !== undefined) throw new UsageError(`option '--${name}' takes no value`);
      value = 'true';
    }
    const list = flags.get(name) ?? [];
    if (list.length && !spec.repeat) throw new UsageError(`option '--${name}' given twice`);
    list.push(value);
    flags.set(name, list);
  }
  return flags;
}

export function parseArgs(argv: string[], commands: Record<string, CommandSpec>): Parsed {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    // `solverlab help run` is `solverlab run --help`
    const about = rest[0];
    if (about !== undefined && !Object.hasOwn(commands, about)) throw new UsageError(`unknown command '${about}' (commands: ${Object.keys(commands).join(', ')})`);
    return { command: 'help', flags: new Map(about ? [['command', [about]]] : []) };
  }
  if (command === '--version' || command === '-v') return { command: 'version', flags: new Map() };
  if (!Object.hasOwn(commands, command)) throw new UsageError(`unknown command '${command}' (commands: ${Object.keys(commands).join(', ')})`);
  const flags = parseFlags(command, rest, commands[command].flags);
  if (flags === 'help') return { command: 'help', flags: new Map([['command', [command]]]) };
  return { command, flags };
}

/** Word-wraps `text` to `width` columns, continuation lines indented by `indent`. */
function wrap(text: string, width: number, indent: number): string {
  const words = text.split(/[ \t\n]+/).filter(Boolean); // not at no-break spaces (U+00A0)
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && indent + line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.join('\n' + ' '.repeat(indent));
}

/** `--name VALUE` as --help shows it. */
function flagText(name: string, spec: FlagSpec): string {
  return spec.value ? `--${name} ${spec.arg ?? 'VALUE'}${spec.repeat ? ' …' : ''}` : `--${name}`;
}

/** A command's --help: its summary, usage lines, and every flag of its spec with its help line. */
export function commandHelp(name: string, cmd: CommandSpec, width = 100): string {
  const out = [`solverlab ${name} — ${cmd.summary}`, ''];
  if (cmd.usage?.length) out.push(...cmd.usage.map((u) => `  ${u}`), '');
  const entries = Object.entries(cmd.flags);
  if (!entries.length) out.push('no options');
  else {
    out.push('options:');
    const col = Math.min(30, Math.max(...entries.map(([n, s]) => flagText(n, s).length)) + 4);
    for (const [n, s] of entries) {
      const head = `  ${flagText(n, s)}`;
      const help = s.help ?? '';
      out.push(head.length + 2 > col ? `${head}\n${' '.repeat(col)}${wrap(help, width, col)}` : `${head.padEnd(col)}${wrap(help, width, col)}`);
    }
  }
  return out.join('\n').trimEnd();
}

/** The overview: every command with its one-line summary and its flags' names (details: COMMAND --help). */
export function overviewHelp(commands: Record<string, CommandSpec>, width = 100): string {
  const out: string[] = [];
  for (const [name, cmd] of Object.entries(commands)) {
    out.push(`  solverlab ${name}  —  ${cmd.summary}`);
    const flags = Object.entries(cmd.flags).map(([n, s]) => `[${flagText(n, s).replace(/ /g, '\u00a0')}]`);
    if (flags.length) out.push(`      ${wrap(flags.join(' '), width, 6).replace(/\u00a0/g, ' ')}`);
  }
  return out.join('\n');
}

/** Decimal numbers only: digits, an optional fraction and exponent (no 0x…, 0o…, 0b…, 1_000, Infinity). */
const decimal = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** `raw` as a decimal number, or NaN for anything else. */
export function decimalNumber(raw: string): number {
  const t = raw.trim();
  return decimal.test(t) ? Number(t) : NaN;
}

/**
 * A finite decimal number, optionally an integer, within its range (model/ranges.ts: the bound it
 * breaks is named, never an infinite one); `why` follows the refusal in brackets (what the bound is for).
 */
export function numberFlag(name: string, raw: string, opts: NumberRange & { why?: string } = {}): number {
  const v = decimalNumber(raw);
  if (!Number.isFinite(v)) {
    const why = /^\s*[+-]?0[xob]/i.test(raw) ? ' (numbers are decimal)' : '';
    throw new UsageError(`--${name} must be a number, got '${raw}'${why}`);
  }
  if (opts.integer && !Number.isInteger(v)) throw new UsageError(`--${name} must be an integer, got '${raw}'`);
  const broken = brokenBound(v, opts);
  if (broken) throw new UsageError(`--${name} must be ${broken}, got ${raw}${opts.why ? ` (${opts.why})` : ''}`);
  return v;
}

/** `--param k=v` pairs → { k: v }: a decimal number, or a vector for `k=x,y[,z]`. */
export function paramFlags(values: string[]): Record<string, number | number[]> {
  const out: Record<string, number | number[]> = {};
  for (const kv of values) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param expects NAME=VALUE, got '${kv}'`);
    const k = kv.slice(0, eq);
    const raw = kv.slice(eq + 1);
    const parts = raw.split(',').map(decimalNumber);
    if (!parts.every(Number.isFinite)) throw new UsageError(`--param ${k} must be a number or numbers separated by commas (decimal), got '${raw}'`);
    if (k in out) throw new UsageError(`--param ${k} given twice`);
    out[k] = parts.length === 1 ? parts[0] : parts;
  }
  return out;
}

/** `0,5,12` → [0, 5, 12] */
export function indexList(name: string, raw: string): number[] {
  return raw.split(',').map((s) => numberFlag(name, s, { integer: true, min: 0 }));
}
