/** Text filters for pipelines: grep, head, tail, cut, wc (toybox flavour, common options only). */
import type { CommandContext, CommandFn } from '../context.ts';
import { resolvePath } from '../context.ts';
import { FsError } from '../fs.ts';
import { toyboxUsage } from './files.ts';

const decoder = new TextDecoder();

/** Input text of a filter: the named files, or stdin. Missing files are reported and skipped. */
async function inputs(
  name: string,
  files: string[],
  ctx: CommandContext,
): Promise<{ texts: Array<{ name: string; text: string }>; status: number }> {
  if (files.length === 0)
    return {
      texts: [{ name: '(standard input)', text: decoder.decode(await ctx.stdin.readAll()) }],
      status: 0,
    };
  const texts: Array<{ name: string; text: string }> = [];
  let status = 0;
  for (const file of files) {
    if (file === '-') {
      texts.push({ name: '(standard input)', text: decoder.decode(await ctx.stdin.readAll()) });
      continue;
    }
    try {
      texts.push({ name: file, text: decoder.decode(ctx.android.fs.read(resolvePath(ctx, file))) });
    } catch (error) {
      if (!(error instanceof FsError)) throw error;
      ctx.io.stderr(`${name}: ${file}: ${error.message}\n`);
      status = name === 'grep' ? 2 : 1;
    }
  }
  return { texts, status };
}

function lines(text: string): string[] {
  if (text === '') return [];
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

export const grep: CommandFn = async (argv, ctx) => {
  const flags = new Set<string>();
  const patterns: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-e') patterns.push(argv[++i] ?? '');
    else if (arg.length > 1 && arg.startsWith('-') && files.length === 0 && patterns.length === 0) {
      for (const f of arg.slice(1)) flags.add(f);
    } else if (patterns.length === 0 && !flags.has('e')) patterns.push(arg);
    else files.push(arg);
  }
  if (patterns.length === 0) {
    ctx.io.stderr(toyboxUsage('grep'));
    return 2;
  }
  let regexps: RegExp[];
  try {
    regexps = patterns.map((p) => {
      const source = flags.has('F')
        ? p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        : flags.has('E')
          ? p
          : basicToExtended(p);
      return new RegExp(
        flags.has('x') ? `^(?:${source})$` : flags.has('w') ? `\\b(?:${source})\\b` : source,
        flags.has('i') ? 'i' : '',
      );
    });
  } catch {
    ctx.io.stderr(`grep: bad regex '${patterns[0]}'\n`);
    return 2;
  }
  const { texts, status } = await inputs('grep', files, ctx);
  let matched = 0;
  let out = '';
  for (const { name, text } of texts) {
    let count = 0;
    for (const [index, line] of lines(text).entries()) {
      const hit = regexps.some((r) => r.test(line)) !== flags.has('v');
      if (!hit) continue;
      count++;
      if (flags.has('c') || flags.has('q') || flags.has('l')) continue;
      const prefix = (texts.length > 1 ? `${name}:` : '') + (flags.has('n') ? `${index + 1}:` : '');
      const body = flags.has('o') && !flags.has('v') ? (line.match(regexps[0] as RegExp)?.[0] ?? '') : line;
      out += `${prefix}${body}\n`;
    }
    if (flags.has('c')) out += `${texts.length > 1 ? `${name}:` : ''}${count}\n`;
    if (flags.has('l') && count > 0) out += `${name}\n`;
    matched += count;
  }
  if (!flags.has('q')) ctx.io.stdout(out);
  if (status !== 0 && !(flags.has('q') && matched > 0)) return status;
  return matched > 0 ? 0 : 1;
};

/** POSIX basic regex to JS: `\(` `\)` `\{` `\}` `\|` `\+` `\?` are the operators, bare ones are literal. */
function basicToExtended(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) {
      const n = pattern[++i] as string;
      out += '(){}|+?'.includes(n) ? n : `\\${n}`;
    } else out += '(){}|+?'.includes(c) ? `\\${c}` : c;
  }
  return out;
}

function countOption(argv: string[], fallback: number): { count: number; files: string[]; fromEnd: boolean } {
  let count = fallback;
  let fromEnd = false;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-n') {
      const value = argv[++i] ?? '';
      fromEnd = value.startsWith('+');
      count = Number.parseInt(value.replace(/^[+-]/, ''), 10);
    } else if (/^-[0-9]+$/.test(arg)) count = Number(arg.slice(1));
    else if (/^-n[+-]?[0-9]+$/.test(arg)) {
      fromEnd = arg[2] === '+';
      count = Number.parseInt(arg.slice(2).replace(/^[+-]/, ''), 10);
    } else files.push(arg);
  }
  return { count: Number.isFinite(count) ? count : fallback, files, fromEnd };
}

export const head: CommandFn = async (argv, ctx) => {
  const { count, files } = countOption(argv, 10);
  const { texts, status } = await inputs('head', files, ctx);
  for (const { text } of texts) {
    const all = lines(text).slice(0, count);
    ctx.io.stdout(all.map((l) => `${l}\n`).join(''));
  }
  return status;
};

export const tail: CommandFn = async (argv, ctx) => {
  const { count, files, fromEnd } = countOption(argv, 10);
  const { texts, status } = await inputs('tail', files, ctx);
  for (const { text } of texts) {
    const all = lines(text);
    const picked = fromEnd ? all.slice(Math.max(0, count - 1)) : count === 0 ? [] : all.slice(-count);
    ctx.io.stdout(picked.map((l) => `${l}\n`).join(''));
  }
  return status;
};

export const cut: CommandFn = async (argv, ctx) => {
  let delimiter = '\t';
  let fields: string | undefined;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-d') delimiter = argv[++i] ?? '\t';
    else if (arg.startsWith('-d')) delimiter = arg.slice(2);
    else if (arg === '-f') fields = argv[++i];
    else if (arg.startsWith('-f')) fields = arg.slice(2);
    else files.push(arg);
  }
  if (fields === undefined) {
    ctx.io.stderr('cut: Needs -fcb (see "cut --help")\n');
    return 1;
  }
  const wanted = (index: number): boolean =>
    (fields as string).split(',').some((range) => {
      const [a, b] = range.split('-');
      const lo = a === '' || a === undefined ? 1 : Number(a);
      const hi = b === undefined ? lo : b === '' ? Number.POSITIVE_INFINITY : Number(b);
      return index >= lo && index <= hi;
    });
  const sep = delimiter.slice(0, 1) || '\t';
  const { texts, status } = await inputs('cut', files, ctx);
  for (const { text } of texts) {
    const out = lines(text).map((line) => {
      if (!line.includes(sep)) return `${line}\n`;
      return `${line
        .split(sep)
        .filter((_f, i) => wanted(i + 1))
        .join(sep)}\n`;
    });
    ctx.io.stdout(out.join(''));
  }
  return status;
};

export const wc: CommandFn = async (argv, ctx) => {
  const flags = new Set(
    argv.filter((a) => a.startsWith('-') && a.length > 1).flatMap((a) => [...a.slice(1)]),
  );
  const files = argv.filter((a) => !(a.startsWith('-') && a.length > 1));
  const { texts, status } = await inputs('wc', files, ctx);
  const showAll = !flags.has('l') && !flags.has('w') && !flags.has('c');
  for (const { name, text } of texts) {
    const counts: number[] = [];
    if (showAll || flags.has('l')) counts.push((text.match(/\n/g) ?? []).length);
    if (showAll || flags.has('w')) counts.push(text.split(/\s+/).filter((w) => w !== '').length);
    if (showAll || flags.has('c')) counts.push(new TextEncoder().encode(text).byteLength);
    const label = files.length > 0 ? ` ${name}` : '';
    ctx.io.stdout(
      `${counts.map((c) => (counts.length > 1 ? String(c).padStart(7) : String(c))).join(' ')}${label}\n`,
    );
  }
  return status;
};
