/** File utilities as toybox prints them: cat, ls, rm, rmdir, mkdir, touch, sha256sum/md5sum. */
import { createHash } from 'node:crypto';
import type { FileStat } from '../../types.ts';
import { type CommandContext, type CommandFn, resolvePath } from '../context.ts';
import { FsError, normalizePath } from '../fs.ts';

/** Split `-abc` style flags from operands (stops at `--`). */
export function parseFlags(
  argv: string[],
  known: string,
): { flags: Set<string>; operands: string[]; bad?: string } {
  const flags = new Set<string>();
  const operands: string[] = [];
  let options = true;
  for (const arg of argv) {
    if (options && arg === '--') {
      options = false;
      continue;
    }
    if (options && arg.length > 1 && arg.startsWith('-')) {
      for (const f of arg.slice(1)) {
        if (!known.includes(f)) return { flags, operands, bad: f };
        flags.add(f);
      }
      continue;
    }
    operands.push(arg);
  }
  return { flags, operands };
}

/**
 * toybox's usage error line: `NAME: Unknown option 'X' (see "NAME --help")` for a bad flag,
 * `NAME: Needs 1 argument (see "NAME --help")` without one.
 */
export function toyboxUsage(name: string, bad?: string): string {
  const what = bad === undefined ? 'Needs 1 argument' : `Unknown option '${bad}'`;
  return `${name}: ${what} (see "${name} --help")\n`;
}

function fsMessage(error: unknown): string {
  if (error instanceof FsError) return error.message;
  throw error;
}

function abs(ctx: CommandContext, path: string): string {
  return normalizePath(resolvePath(ctx, path));
}

export const cat: CommandFn = async (argv, ctx) => {
  const { operands } = parseFlags(argv, 'uvte');
  if (operands.length === 0) operands.push('-');
  let status = 0;
  for (const path of operands) {
    if (path === '-') {
      for (let chunk = await ctx.stdin.next(); chunk !== undefined; chunk = await ctx.stdin.next()) {
        ctx.io.stdout(chunk);
      }
      continue;
    }
    try {
      ctx.io.stdout(ctx.android.fs.read(abs(ctx, path)));
    } catch (error) {
      ctx.io.stderr(`cat: ${path}: ${fsMessage(error)}\n`);
      status = 1;
    }
  }
  return status;
};

export const rm: CommandFn = async (argv, ctx) => {
  const { flags, operands, bad } = parseFlags(argv, 'fiRrv');
  if (bad !== undefined) {
    ctx.io.stderr(toyboxUsage('rm', bad));
    return 1;
  }
  const force = flags.has('f');
  const recursive = flags.has('r') || flags.has('R');
  if (operands.length === 0 && !force) {
    ctx.io.stderr(toyboxUsage('rm'));
    return 1;
  }
  let status = 0;
  for (const path of operands) {
    try {
      ctx.android.fs.rm(abs(ctx, path), { recursive });
    } catch (error) {
      const message = fsMessage(error);
      if (force && message === 'No such file or directory') continue;
      ctx.io.stderr(`rm: ${path}: ${message}\n`);
      status = 1;
    }
  }
  return status;
};

/** toybox `rmdir [-p] DIR...`: removes empty directories (`-p`: then their emptied parents). */
export const rmdir: CommandFn = async (argv, ctx) => {
  const { flags, operands, bad } = parseFlags(argv, 'p');
  if (bad !== undefined || operands.length === 0) {
    ctx.io.stderr(toyboxUsage('rmdir', bad));
    return 1;
  }
  let status = 0;
  for (const operand of operands) {
    let path = operand.replace(/(.)\/+$/, '$1');
    for (;;) {
      try {
        ctx.android.fs.rmdir(abs(ctx, path));
      } catch (error) {
        ctx.io.stderr(`rmdir: ${path}: ${fsMessage(error)}\n`);
        status = 1;
        break;
      }
      const slash = path.lastIndexOf('/');
      if (!flags.has('p') || slash <= 0) break;
      path = path.slice(0, slash);
    }
  }
  return status;
};

export const mkdir: CommandFn = async (argv, ctx) => {
  const args: string[] = [];
  let mode: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-m') {
      mode = Number.parseInt(argv[++i] ?? '', 8);
      continue;
    }
    args.push(arg);
  }
  const { flags, operands, bad } = parseFlags(args, 'pv');
  if (bad !== undefined || operands.length === 0) {
    ctx.io.stderr(toyboxUsage('mkdir', bad));
    return 1;
  }
  let status = 0;
  for (const path of operands) {
    try {
      ctx.android.fs.mkdir(abs(ctx, path), {
        parents: flags.has('p'),
        ...(mode === undefined || Number.isNaN(mode) ? {} : { mode }),
      });
    } catch (error) {
      ctx.io.stderr(`mkdir: '${path}': ${fsMessage(error)}\n`);
      status = 1;
    }
  }
  return status;
};

export const touch: CommandFn = async (argv, ctx) => {
  const { operands } = parseFlags(argv, 'acmh');
  let status = 0;
  for (const path of operands) {
    const target = abs(ctx, path);
    try {
      const existing = ctx.android.fs.stat(target);
      if (existing?.type === 'dir') continue;
      const data = existing === undefined ? new Uint8Array(0) : ctx.android.fs.read(target);
      ctx.android.fs.write(target, data);
    } catch (error) {
      ctx.io.stderr(`touch: '${path}': ${fsMessage(error)}\n`);
      status = 1;
    }
  }
  return status;
};

function digestCommand(name: string, algorithm: 'sha256' | 'sha1' | 'md5'): CommandFn {
  return async (argv, ctx) => {
    const { operands } = parseFlags(argv, 'bc');
    if (operands.length === 0) operands.push('-');
    let status = 0;
    for (const path of operands) {
      const hash = createHash(algorithm);
      if (path === '-') {
        for (let chunk = await ctx.stdin.next(); chunk !== undefined; chunk = await ctx.stdin.next())
          hash.update(chunk);
      } else {
        try {
          hash.update(ctx.android.fs.read(abs(ctx, path)));
        } catch (error) {
          ctx.io.stderr(`${name}: ${path}: ${fsMessage(error)}\n`);
          status = 1;
          continue;
        }
      }
      ctx.io.stdout(`${hash.digest('hex')}  ${path}\n`);
    }
    return status;
  };
}

export const sha256sum = digestCommand('sha256sum', 'sha256');
export const sha1sum = digestCommand('sha1sum', 'sha1');
export const md5sum = digestCommand('md5sum', 'md5');

export const ls: CommandFn = async (argv, ctx) => {
  const { flags, operands, bad } = parseFlags(argv, 'laAd1hnRst');
  if (bad !== undefined) {
    ctx.io.stderr(`ls: Unknown option '${bad}' (see "ls --help")\n`);
    return 1;
  }
  if (operands.length === 0) operands.push('.');
  const long = flags.has('l') || flags.has('n');
  const all = flags.has('a');
  const fs = ctx.android.fs;
  let status = 0;
  const files: Array<{ name: string; path: string; stat: FileStat }> = [];
  const dirs: Array<{ name: string; path: string }> = [];
  for (const operand of operands) {
    const path = abs(ctx, operand);
    const stat = fs.stat(path);
    if (stat === undefined) {
      ctx.io.stderr(`ls: ${operand}: No such file or directory\n`);
      status = 1;
    } else if (stat.type === 'dir' && !flags.has('d')) dirs.push({ name: operand, path });
    else files.push({ name: operand, path, stat });
  }
  const line = (name: string, path: string, stat: FileStat): string =>
    long ? `${longLine(name, path, stat, flags.has('n'))}\n` : `${name}\n`;
  ctx.io.stdout(files.map((f) => line(f.name, f.path, f.stat)).join(''));
  const header = files.length + dirs.length > 1;
  for (const [index, dir] of dirs.entries()) {
    let entries: Array<{ name: string; stat: FileStat }>;
    try {
      entries = fs.readdir(dir.path);
    } catch (error) {
      ctx.io.stderr(`ls: ${dir.name}: ${fsMessage(error)}\n`);
      status = 1;
      continue;
    }
    if (all) {
      const self = fs.stat(dir.path);
      const parent = fs.stat(normalizePath(`${dir.path}/..`));
      entries = [
        ...(self ? [{ name: '.', stat: self }] : []),
        ...(parent ? [{ name: '..', stat: parent }] : []),
        ...entries,
      ];
    } else if (!flags.has('A')) entries = entries.filter((e) => !e.name.startsWith('.'));
    let out = header ? `${index > 0 || files.length > 0 ? '\n' : ''}${dir.name}:\n` : '';
    if (long) out += `total ${entries.reduce((sum, e) => sum + Math.ceil(e.stat.size / 4096) * 4, 0)}\n`;
    for (const entry of entries)
      out += line(entry.name, normalizePath(`${dir.path}/${entry.name}`), entry.stat);
    ctx.io.stdout(out);
  }
  return status;
};

function modeString(mode: number): string {
  const type = (mode & 0o170000) === 0o040000 ? 'd' : (mode & 0o170000) === 0o020000 ? 'c' : '-';
  const bits = 'rwxrwxrwx';
  let perms = '';
  for (let i = 0; i < 9; i++) perms += mode & (1 << (8 - i)) ? bits[i] : '-';
  if (mode & 0o2000) perms = `${perms.slice(0, 5)}${perms[5] === 'x' ? 's' : 'S'}${perms.slice(6)}`;
  return type + perms;
}

function ownerOf(path: string, numeric: boolean): string {
  const shellOwned = path.startsWith('/data/local/tmp') || path.startsWith('/sdcard');
  if (path.startsWith('/sdcard')) return numeric ? '0        1015' : 'root     everybody';
  if (shellOwned) return numeric ? '2000     2000' : 'shell    shell';
  if (path.startsWith('/data/app/')) return numeric ? '1000     1000' : 'system   system';
  return numeric ? '0        0' : 'root     root';
}

function longLine(name: string, path: string, stat: FileStat, numeric: boolean): string {
  const date = new Date(stat.mtimeSec * 1000).toISOString();
  const when = `${date.slice(0, 10)} ${date.slice(11, 16)}`;
  const links = stat.type === 'dir' ? 2 : 1;
  return `${modeString(stat.mode)} ${links} ${ownerOf(path, numeric)} ${String(stat.size).padStart(8)} ${when} ${name}`;
}
