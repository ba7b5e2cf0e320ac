/**
 * toybox `find [-H|-L] PATH... [EXPRESSION]`, the subset scripts use to sweep a device: `-name`,
 * `-iname`, `-path`, `-ipath`, `-type d|f|l`, `-mindepth N`, `-maxdepth N`, `-xdev`, `-prune`,
 * `-print`, `-print0`, `!`/`-not`, `-a`/`-and`, `-o`/`-or` and `( ... )`. It walks the file system as
 * the shell user sees it, pre-order with a directory's entries in name order; a directory the shell
 * user cannot list is printed, then reported (`find: DIR: Permission denied`, exit 1) and the walk
 * goes on.
 */
import type { CommandFn } from '../context.ts';
import { resolvePath } from '../context.ts';
import { FsError, normalizePath } from '../fs.ts';

interface Entry {
  /** The path as find prints it (the start path as given, then `/name` per level). */
  path: string;
  name: string;
  type: 'file' | 'dir';
  depth: number;
}

/** What evaluating an expression may do besides answering: print, and stop the descent. */
interface Effects {
  out: string[];
  prune: boolean;
}

type Expr = (entry: Entry, effects: Effects) => boolean;

class FindUsageError extends Error {}

/** fnmatch(3) without FNM_PATHNAME: `*` and `?` also match `/`; `[...]`, `[!...]`, `\x`. */
export function fnmatchRegExp(pattern: string, ignoreCase = false): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i] as string);
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) {
        source += '\\[';
        continue;
      }
      let set = pattern.slice(i + 1, close);
      if (set.startsWith('!')) set = `^${set.slice(1)}`;
      source += `[${set.replace(/[\\\]]/g, '\\$&')}]`;
      i = close;
    } else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

interface Options {
  minDepth: number;
  maxDepth: number;
  hasAction: boolean;
}

/** Parse the expression after the paths; throws `FindUsageError` with toybox's message. */
function parseExpression(tokens: string[], options: Options): Expr {
  let pos = 0;
  const always: Expr = () => true;
  const value = (flag: string): string => {
    const v = tokens[pos++];
    if (v === undefined) throw new FindUsageError(`'${flag}' needs 1 arg`);
    return v;
  };
  const depth = (flag: string): number => {
    const v = value(flag);
    if (!/^[0-9]+$/.test(v)) throw new FindUsageError(`bad ${flag} '${v}'`);
    return Number(v);
  };
  const primary = (): Expr => {
    const token = tokens[pos++] as string;
    switch (token) {
      case '-name':
      case '-iname': {
        const re = fnmatchRegExp(value(token), token === '-iname');
        return (e) => re.test(e.name);
      }
      case '-path':
      case '-ipath':
      case '-wholename': {
        const re = fnmatchRegExp(value(token), token === '-ipath');
        return (e) => re.test(e.path);
      }
      case '-type': {
        const type = value(token);
        if (type === 'd') return (e) => e.type === 'dir';
        if (type === 'f') return (e) => e.type === 'file';
        if (/^[lpscb]$/.test(type)) return () => false;
        throw new FindUsageError(`bad -type '${type}'`);
      }
      case '-mindepth':
        options.minDepth = depth(token);
        return always;
      case '-maxdepth':
        options.maxDepth = depth(token);
        return always;
      case '-xdev':
      case '-mount':
      case '-depth':
      case '-follow':
        return always;
      case '-prune':
        return (e, fx) => {
          if (e.type === 'dir') fx.prune = true;
          return true;
        };
      case '-print':
        options.hasAction = true;
        return (e, fx) => {
          fx.out.push(`${e.path}\n`);
          return true;
        };
      case '-print0':
        options.hasAction = true;
        return (e, fx) => {
          fx.out.push(`${e.path}\0`);
          return true;
        };
      case '-true':
        return always;
      case '-false':
        return () => false;
      default:
        throw new FindUsageError(`bad arg '${token}'`);
    }
  };
  const unary = (): Expr => {
    const token = tokens[pos];
    if (token === '!' || token === '-not') {
      pos++;
      const inner = unary();
      return (e, fx) => !inner(e, fx);
    }
    if (token === '(') {
      pos++;
      const inner = or();
      if (tokens[pos] !== ')') throw new FindUsageError("missing ')'");
      pos++;
      return inner;
    }
    if (token === undefined || token === ')') throw new FindUsageError(`bad arg '${token ?? ''}'`);
    return primary();
  };
  const and = (): Expr => {
    let left = unary();
    for (;;) {
      const token = tokens[pos];
      if (token === undefined || token === ')' || token === '-o' || token === '-or') return left;
      if (token === '-a' || token === '-and') pos++;
      const l = left;
      const r = unary();
      left = (e, fx) => l(e, fx) && r(e, fx);
    }
  };
  const or = (): Expr => {
    let left = and();
    while (tokens[pos] === '-o' || tokens[pos] === '-or') {
      pos++;
      const l = left;
      const r = and();
      left = (e, fx) => l(e, fx) || r(e, fx);
    }
    return left;
  };
  if (tokens.length === 0) return always;
  const expr = or();
  if (pos < tokens.length) throw new FindUsageError(`bad arg '${tokens[pos]}'`);
  return expr;
}

export const find: CommandFn = async (argv, ctx) => {
  let i = 0;
  while (argv[i] === '-H' || argv[i] === '-L' || argv[i] === '-P') i++;
  const paths: string[] = [];
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if ((arg.startsWith('-') && arg !== '-') || arg === '!' || arg === '(') break;
    paths.push(arg);
  }
  if (paths.length === 0) paths.push('.');
  const options: Options = { minDepth: 0, maxDepth: Number.POSITIVE_INFINITY, hasAction: false };
  let expr: Expr;
  try {
    expr = parseExpression(argv.slice(i), options);
  } catch (error) {
    if (!(error instanceof FindUsageError)) throw error;
    ctx.io.stderr(`find: ${error.message}\n`);
    return 1;
  }
  const test: Expr = options.hasAction
    ? expr
    : (e, fx) => {
        if (expr(e, fx)) fx.out.push(`${e.path}\n`);
        return true;
      };

  const fs = ctx.android.fs;
  let status = 0;
  const out: string[] = [];
  const visit = (path: string, absolute: string, name: string, depth: number): void => {
    const stat = fs.stat(absolute);
    if (stat === undefined) return;
    const effects: Effects = { out, prune: false };
    if (depth >= options.minDepth) test({ path, name, type: stat.type, depth }, effects);
    if (stat.type !== 'dir' || effects.prune || depth >= options.maxDepth) return;
    let entries: Array<{ name: string }>;
    try {
      entries = fs.readdir(absolute);
    } catch (error) {
      if (!(error instanceof FsError)) throw error;
      ctx.io.stdout(out.splice(0).join(''));
      ctx.io.stderr(`find: ${path}: ${error.message}\n`);
      status = 1;
      return;
    }
    for (const entry of entries) {
      const childPath = path.endsWith('/') ? `${path}${entry.name}` : `${path}/${entry.name}`;
      visit(childPath, normalizePath(`${absolute}/${entry.name}`), entry.name, depth + 1);
    }
  };
  for (const path of paths) {
    const absolute = normalizePath(resolvePath(ctx, path));
    if (fs.stat(absolute) === undefined) {
      ctx.io.stdout(out.splice(0).join(''));
      ctx.io.stderr(`find: ${path}: No such file or directory\n`);
      status = 1;
      continue;
    }
    const trimmed = path.replace(/\/+$/, '');
    visit(path, absolute, trimmed === '' ? '/' : trimmed.slice(trimmed.lastIndexOf('/') + 1), 0);
  }
  ctx.io.stdout(out.join(''));
  return status;
};
