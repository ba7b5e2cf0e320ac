/**
 * The one Lua script loader for every Redis store (leases, devices).
 *
 * A store keeps each atomic operation in its own file under `<store>/lua/<name>.lua`; fragments the
 * scripts share live under `<store>/lua/includes/` and are pulled in with a line of its own:
 *
 *   --- @include "includes/end-lease"
 *
 * The path is relative to the including file; `.lua` is appended when missing. `loadScript` reads
 * the file, replaces every include line with the fragment's text (recursively, depth first) and
 * inlines each fragment at most once per script — the first include wins, later ones (direct or
 * through another fragment) become empty — so two fragments may both include a third. An include
 * cycle or a missing file is a `ScriptLoaderError` naming the include chain.
 *
 * Files are located with `new URL('./lua/x.lua', import.meta.url)` by the store modules, so the
 * scripts are found beside the module both under `src/` and in a built `dist/` that copies the
 * `lua/` folders.
 *
 * `ScriptSet` runs the loaded scripts on an ioredis client: EVALSHA with the script's SHA-1, and EVAL
 * of its source when Redis answers NOSCRIPT (fresh server, SCRIPT FLUSH). Not `defineCommand`: every
 * script defined there is copied onto each pipeline ioredis builds — one per tick with
 * auto-pipelining — and each call goes through a per-call wrapper (measured: see RESULTS.md, leaseops).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

/** A top-level script with its includes inlined. */
export interface LoadedScript {
  /** File name without `.lua`. */
  name: string;
  /** Where the top-level file lives. */
  url: URL;
  /** The source Redis runs: the file with every include inlined once. */
  lua: string;
  /** SHA-1 (hex) of `lua`: what EVALSHA and SCRIPT EXISTS use. */
  sha: string;
  /** The fragments inlined, in the order they appear in `lua`. */
  includes: URL[];
}

export class ScriptLoaderError extends Error {
  /** The chain of files being read when it failed, outermost first. */
  readonly chain: string[];

  constructor(message: string, chain: string[]) {
    super(message);
    this.name = 'ScriptLoaderError';
    this.chain = chain;
  }
}

/** `--- @include "path"` (two or three dashes, single or double quotes), alone on its line. */
const INCLUDE_LINE = /^-{2,3}[ \t]*@include[ \t]+(["'])([^"'\r\n]+)\1[ \t;]*$/gm;

function withExtension(reference: string): string {
  return reference.endsWith('.lua') ? reference : `${reference}.lua`;
}

/** A short name for errors: the path from the nearest `lua/` folder on, else the file name. */
function shortName(url: URL): string {
  const path = fileURLToPath(url);
  const at = path.lastIndexOf('/lua/');
  return at === -1 ? path.slice(path.lastIndexOf('/') + 1) : path.slice(at + 1);
}

function readSource(url: URL, chain: string[], reference?: string, line?: number): string {
  try {
    return readFileSync(url, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const where = reference === undefined ? '' : ` (include "${reference}" at line ${line})`;
    throw new ScriptLoaderError(`Lua script not found: ${shortName(url)}${where}`, chain);
  }
}

interface Expansion {
  /** Fragments already inlined into this script (href). */
  done: Set<string>;
  /** Inlined fragments in order. */
  order: URL[];
}

function expand(url: URL, source: string, stack: URL[], state: Expansion): string {
  const chain = stack.map(shortName);
  return source.replace(INCLUDE_LINE, (_match, _quote: string, reference: string, offset: number) => {
    const target = new URL(withExtension(reference.trim()), url);
    const line = source.slice(0, offset).split('\n').length;
    if (stack.some((u) => u.href === target.href)) {
      throw new ScriptLoaderError(
        `Lua include cycle: ${[...chain, shortName(target)].join(' -> ')} (line ${line} of ${shortName(url)})`,
        [...chain, shortName(target)],
      );
    }
    if (state.done.has(target.href)) return `-- (${reference} already included above)`;
    const text = readSource(target, [...chain, shortName(target)], reference, line);
    state.done.add(target.href);
    const body = expand(target, text, [...stack, target], state);
    state.order.push(target);
    return `-- >>> ${shortName(target)}\n${body.trimEnd()}\n-- <<< ${shortName(target)}`;
  });
}

/** Read one top-level script and inline its includes. Throws ScriptLoaderError. */
export function loadScript(url: URL): LoadedScript {
  const name = shortName(url)
    .replace(/^.*\//, '')
    .replace(/\.lua$/, '');
  const source = readSource(url, [shortName(url)]);
  const state: Expansion = { done: new Set(), order: [] };
  const lua = expand(url, source, [url], state);
  return { name, url, lua, sha: createHash('sha1').update(lua).digest('hex'), includes: state.order };
}

const cache = new Map<string, LoadedScript>();

/**
 * The scripts `names` of the folder `dir` (a `file:` URL ending in `/`), each read and expanded once
 * per process.
 */
export function loadScripts<N extends string>(dir: URL, names: readonly N[]): Map<N, LoadedScript> {
  const out = new Map<N, LoadedScript>();
  for (const name of names) {
    const url = new URL(`${name}.lua`, dir);
    let script = cache.get(url.href);
    if (script === undefined) {
      script = loadScript(url);
      cache.set(url.href, script);
    }
    out.set(name, script);
  }
  return out;
}

type EvalCommand = (...args: Array<string | number>) => Promise<unknown>;

export interface ScriptSetOptions<N extends string> {
  /** Folder of the scripts (`new URL('./lua/', import.meta.url)`). */
  dir: URL;
  names: readonly N[];
}

/** Redis' answer to EVALSHA of a script it does not hold. */
function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/**
 * A folder of scripts run on one client. Every script takes a variable number of keys: `run` passes
 * the key count first. Several stores may share a client (nothing is registered on it).
 */
export class ScriptSet<N extends string> {
  readonly #scripts: Map<N, LoadedScript>;
  /** The client's EVALSHA and EVAL, looked up once (a store's connection wraps each method it hands out). */
  readonly #evalsha: EvalCommand;
  readonly #eval: EvalCommand;

  constructor(client: Redis, options: ScriptSetOptions<N>) {
    this.#scripts = loadScripts(options.dir, options.names);
    const commands = client as unknown as { evalsha: EvalCommand; eval: EvalCommand };
    this.#evalsha = commands.evalsha.bind(client);
    this.#eval = commands.eval.bind(client);
  }

  /** The loaded script (its expanded source and sha). */
  script(name: N): LoadedScript {
    const script = this.#scripts.get(name);
    if (script === undefined) throw new Error(`Lua script ${name} is not loaded`);
    return script;
  }

  /** Run a script (EVALSHA, EVAL after NOSCRIPT); resolves its raw reply. */
  run(name: N, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    const script = this.script(name);
    return this.#evalsha(script.sha, keys.length, ...keys, ...args).catch((err: unknown) => {
      if (!isNoScript(err)) throw err;
      return this.#eval(script.lua, keys.length, ...keys, ...args);
    });
  }
}
