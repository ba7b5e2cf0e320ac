/** The Lua script loader: include resolution, once-only inlining, cycles and missing files. */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEVICE_SCRIPT_DIR, DEVICE_SCRIPT_NAMES } from '../../src/devices/redis-store.ts';
import { LEASE_SCRIPT_DIR, SCRIPT_NAMES } from '../../src/leases/redis-scripts.ts';
import { loadScript, loadScripts, ScriptLoaderError } from '../../src/redis/script-loader.ts';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'lua-loader-'));
  mkdirSync(path.join(dir, 'lua', 'includes'), { recursive: true });
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(relative: string, text: string): URL {
  const file = path.join(dir, 'lua', relative);
  writeFileSync(file, text);
  return pathToFileURL(file);
}

function loaderError(run: () => unknown): ScriptLoaderError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ScriptLoaderError);
    return err as ScriptLoaderError;
  }
  throw new Error('expected a ScriptLoaderError');
}

describe('loadScript', () => {
  it('inlines an include in place of its line, relative to the including file, .lua optional', () => {
    write('includes/add.lua', 'local function add(a, b) return a + b end\n');
    const url = write('main.lua', '-- header\n--- @include "includes/add"\nreturn add(1, 2)\n');
    const script = loadScript(url);
    expect(script.name).toBe('main');
    expect(script.lua).not.toContain('@include');
    const lines = script.lua.split('\n');
    expect(lines[0]).toBe('-- header');
    expect(lines.indexOf('local function add(a, b) return a + b end')).toBeGreaterThan(0);
    expect(lines.indexOf('local function add(a, b) return a + b end')).toBeLessThan(
      lines.indexOf('return add(1, 2)'),
    );
    expect(script.includes.map((u) => path.basename(u.pathname))).toEqual(['add.lua']);
    // Explicit extension, single quotes and two dashes are the same include.
    const other = write('other.lua', "-- @include 'includes/add.lua'\nreturn add(2, 2)\n");
    expect(loadScript(other).lua).toContain('local function add(a, b)');
  });

  it('nested includes resolve relative to their own file; a fragment reached twice is inlined once', () => {
    write('includes/base.lua', 'local function base() return 1 end\n');
    write('includes/left.lua', '--- @include "base"\nlocal function left() return base() end\n');
    write('includes/right.lua', '--- @include "./base.lua"\nlocal function right() return base() end\n');
    const url = write(
      'diamond.lua',
      '--- @include "includes/left"\n--- @include "includes/right"\n--- @include "includes/base"\nreturn left() + right()\n',
    );
    const script = loadScript(url);
    expect(script.lua.match(/local function base\(\)/g)).toHaveLength(1);
    const at = (s: string): number => script.lua.indexOf(s);
    expect(at('local function base()')).toBeLessThan(at('local function left()'));
    expect(at('local function left()')).toBeLessThan(at('local function right()'));
    expect(at('local function right()')).toBeLessThan(at('return left() + right()'));
    expect(script.includes.map((u) => path.basename(u.pathname))).toEqual([
      'base.lua',
      'left.lua',
      'right.lua',
    ]);
  });

  it('reaches a sibling folder through ../', () => {
    mkdirSync(path.join(dir, 'shared'));
    writeFileSync(path.join(dir, 'shared', 'util.lua'), 'local function util() return 7 end\n');
    const url = write('main.lua', '--- @include "../shared/util"\nreturn util()\n');
    expect(loadScript(url).lua).toContain('local function util() return 7 end');
  });

  it('leaves text that only mentions @include alone (not alone on its line)', () => {
    const url = write('main.lua', '--[[ use --- @include "x" to share code ]]\nreturn 1\n');
    expect(loadScript(url).lua).toBe('--[[ use --- @include "x" to share code ]]\nreturn 1\n');
  });

  it('sha is the SHA-1 of the expanded source (what EVALSHA uses)', () => {
    write('includes/one.lua', 'local one = 1\n');
    const script = loadScript(write('main.lua', '--- @include "includes/one"\nreturn one\n'));
    expect(script.sha).toBe(createHash('sha1').update(script.lua).digest('hex'));
    expect(script.sha).toMatch(/^[0-9a-f]{40}$/);
  });

  it('an include cycle is an error naming the chain', () => {
    write('includes/a.lua', '--- @include "b"\nlocal a = 1\n');
    write('includes/b.lua', '--- @include "a"\nlocal b = 1\n');
    const url = write('main.lua', '--- @include "includes/a"\nreturn 1\n');
    const err = loaderError(() => loadScript(url));
    expect(err.message).toMatch(/cycle/);
    expect(err.chain).toEqual([
      'lua/main.lua',
      'lua/includes/a.lua',
      'lua/includes/b.lua',
      'lua/includes/a.lua',
    ]);
  });

  it('a script that includes itself is a cycle', () => {
    const url = write('self.lua', 'local x = 1\n--- @include "self"\n');
    expect(loaderError(() => loadScript(url)).message).toMatch(/cycle: lua\/self\.lua -> lua\/self\.lua/);
  });

  it('a missing include is an error naming the file, the reference and its line', () => {
    const url = write('main.lua', '-- one\n-- two\n--- @include "includes/nope"\nreturn 1\n');
    const err = loaderError(() => loadScript(url));
    expect(err.message).toBe(
      'Lua script not found: lua/includes/nope.lua (include "includes/nope" at line 3)',
    );
    expect(err.chain).toEqual(['lua/main.lua', 'lua/includes/nope.lua']);
  });

  it('a missing script is an error naming it', () => {
    const err = loaderError(() => loadScript(pathToFileURL(path.join(dir, 'lua', 'gone.lua'))));
    expect(err.message).toBe('Lua script not found: lua/gone.lua');
  });
});

describe('loadScripts', () => {
  it('loads the named scripts of a folder, once per process', () => {
    write('a.lua', 'return 1\n');
    write('b.lua', 'return 2\n');
    const folder = pathToFileURL(`${path.join(dir, 'lua')}/`);
    const first = loadScripts(folder, ['a', 'b'] as const);
    expect([...first.keys()]).toEqual(['a', 'b']);
    expect(first.get('b')?.lua).toBe('return 2\n');
    write('a.lua', 'return 99\n');
    expect(loadScripts(folder, ['a'] as const).get('a')).toBe(first.get('a'));
  });

  it('every script the stores ship loads, with no include left unresolved', () => {
    const stores = [
      { dir: LEASE_SCRIPT_DIR, names: SCRIPT_NAMES },
      { dir: DEVICE_SCRIPT_DIR, names: DEVICE_SCRIPT_NAMES },
    ];
    for (const { dir: folder, names } of stores) {
      expect(folder.pathname).toMatch(/\/src\/(leases|devices)\/lua\/$/);
      for (const [name, script] of loadScripts(folder, names)) {
        expect(script.lua, name).not.toMatch(/^-{2,3}[ \t]*@include/m);
        // Every script documents its keys, arguments and reply in its header.
        expect(script.lua, name).toMatch(/KEYS\[1\]/);
        expect(script.lua, name).toMatch(/Returns/);
      }
    }
  });

  it('the lease scripts share their fragments instead of repeating them', () => {
    const scripts = loadScripts(LEASE_SCRIPT_DIR, SCRIPT_NAMES);
    const using = (fn: string): string[] =>
      [...scripts].filter(([, s]) => s.lua.includes(`local function ${fn}(`)).map(([n]) => n);
    expect(using('endLease').sort()).toEqual(['claim-expired', 'release', 'release-empty']);
    expect(using('indexTeardown').sort()).toEqual(['record-teardown', 'release-empty']);
    expect(using('removeWaiter').sort()).toEqual(['acquire', 'dequeue', 'list-waiters', 'waiting']);
    expect(using('dropEmptyQueue').sort()).toEqual(['dequeue', 'list-waiters', 'waiting']);
    // The fragments own these steps: no script spells them out any more.
    for (const [name, script] of scripts) {
      const own = script.lua.replace(/-- >>> [^\n]*\n[\s\S]*?-- <<< [^\n]*\n/g, '');
      expect(own, name).not.toMatch(/'PEXPIRE', \w+, ARGV\[3\]/);
      expect(own, name).not.toMatch(/'HDEL', KEYS\[\d\], (waiter|ARGV\[1\]|head)/);
    }
  });
});
