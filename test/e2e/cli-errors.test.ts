/**
 * CLI error paths through the real `devicebridge` binary: one line on stderr, the documented exit
 * code, never a stack trace, never a secret (tokens file content, credentials in DEVICEBRIDGE_URL),
 * and refused input refused up front (empty store path, non-regular APK, unresolvable bind host).
 */
import { lookup } from 'node:dns/promises';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/auth/tokens.ts';
import { fixture, tempDir } from '../support/bridge.ts';
import { type CliResult, runCli, runProcess } from '../support/cli.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const STACK = /\n\s+at /;

/** Exactly one line on stderr, no stack frames. */
function oneLine(r: CliResult): string {
  expect(r.stderr).not.toMatch(STACK);
  expect(r.stderr.endsWith('\n')).toBe(true);
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  return r.stderr;
}

function runIn(cwd: string, args: string[], timeoutMs = 20_000): Promise<CliResult> {
  return runCli(args, { cwd, timeoutMs });
}

describe('devicebridge CLI error paths', () => {
  it('credentials in DEVICEBRIDGE_URL or --url are refused with exit 2 and never printed', async () => {
    for (const url of [
      'http://ops:s3cr3t-pw@127.0.0.1:1',
      'http://o@ps:s3cr3t-pw@127.0.0.1:1/',
      'notaurl:s3cr3t-pw@@',
    ]) {
      const viaEnv = await runCli(['lease', 'list'], { env: { DEVICEBRIDGE_URL: url } });
      expect(viaEnv.code, viaEnv.stderr).toBe(2);
      expect(oneLine(viaEnv)).toContain('DEVICEBRIDGE_URL');
      expect(viaEnv.stderr + viaEnv.stdout).not.toContain('s3cr3t');
    }
    const viaFlag = await runCli(['lease', 'list', '--url', 'http://ops:s3cr3t-pw@127.0.0.1:1', '--json']);
    expect(viaFlag.code, viaFlag.stderr).toBe(2);
    expect(oneLine(viaFlag)).toContain('--url');
    expect(viaFlag.stderr + viaFlag.stdout).not.toContain('s3cr3t');
  });

  it('a tokens file that is not JSON: serve exits 2 naming line and column, never the content', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const secret = hashToken('a-real-token');
    const tokens = path.join(tmp.dir, 'tokens.json');
    await writeFile(
      tokens,
      `[\n {"name": "ops", "tenant": "acme", "role": "admin",\n  "sha256": "${secret}" x}\n]\n`,
    );
    const r = await runCli(['serve', '--port', '0', '--no-devices', '--data-dir', tmp.dir], {
      env: { DEVICEBRIDGE_TOKENS_FILE: tokens, LOG_LEVEL: 'silent' },
    });
    expect(r.code, r.stderr).toBe(2);
    expect(oneLine(r)).toMatch(/DEVICEBRIDGE_TOKENS_FILE: .*line 3, column \d+/);
    expect(r.stderr).not.toContain(secret.slice(0, 12));
    expect(r.stderr).not.toContain('acme');
  });

  it('--host foo.localhost is resolved before the loopback decision; unresolvable is exit 2, one line', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const resolved = await lookup('foo.localhost', { all: true }).catch(() => null);
    const r = await runCli(
      ['serve', '--host', 'foo.localhost', '--port', '0', '--no-devices', '--data-dir', tmp.dir],
      {
        env: { LOG_LEVEL: 'silent' },
        timeoutMs: 20_000,
      },
    );
    if (resolved === null) {
      expect(r.code, r.stderr).toBe(2);
      expect(oneLine(r)).toContain('cannot resolve "foo.localhost"');
    } else {
      // Where the resolver maps *.localhost somewhere: only all-loopback answers may bind without tokens.
      const loopback = resolved.every((a) => a.address === '::1' || a.address.startsWith('127.'));
      expect(loopback ? r.code === null : r.code === 2).toBe(true);
    }
  });

  it('release publish: an empty file: store and a non-regular --apk are refused with exit 2', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const apk = fixture('snapshot-helper-v2.apk');
    const empty = await runIn(tmp.dir, [
      'release',
      'publish',
      '--apk',
      apk,
      '--version',
      '0.2.0',
      '--store',
      'file:',
    ]);
    expect(empty.code, empty.stderr).toBe(2);
    expect(oneLine(empty)).toContain('--store');
    expect(await readdir(tmp.dir)).toEqual([]); // nothing written to ./artifacts

    const zero = await runIn(
      tmp.dir,
      ['release', 'publish', '--apk', '/dev/zero', '--version', '0.2.0', '--store', `file:${tmp.dir}/var`],
      45_000,
    );
    expect(zero.code, zero.stderr).toBe(2);
    expect(oneLine(zero)).toContain('not a regular file');
    // Refused by the file's type, before reading: a read of /dev/zero up to a limit would answer
    // otherwise (or not within runIn's bound).
    const dir = await runIn(tmp.dir, [
      'release',
      'publish',
      '--apk',
      tmp.dir,
      '--version',
      '0.2.0',
      '--store',
      'file:var',
    ]);
    expect(dir.code, dir.stderr).toBe(2);
    expect(await readdir(tmp.dir)).toEqual([]);
  });

  it('an error no command caught prints one line and exits 1, without a stack trace', async () => {
    const script = `
      const { installCrashHandlers } = await import(${JSON.stringify(path.resolve(import.meta.dirname, '../../src/cli/main.ts'))});
      installCrashHandlers();
      setTimeout(() => { throw new Error('boom at http://ops:s3cr3t-pw@example.test/x'); }, 10);
    `;
    const r = await runProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    expect(r.code).toBe(1);
    expect(oneLine(r)).toBe('devicebridge: Error: boom at http://***@example.test/x\n');
  });
});
