/** forward-target.ts (the specs the bridge sends and where it connects) and socket-dir.ts. */
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeLocal,
  filesystemSpecPath,
  forwardTarget,
  isForwardSpec,
  MAX_SOCKET_PATH,
} from '../../src/adb/forward-target.ts';
import { SocketDir } from '../../src/adb/socket-dir.ts';

describe('forward specs', () => {
  it('accepts tcp ports, abstract names and plain absolute socket paths', () => {
    expect(isForwardSpec('tcp:0')).toBe(true);
    expect(isForwardSpec('tcp:65535')).toBe(true);
    expect(isForwardSpec('tcp:65536')).toBe(false);
    expect(isForwardSpec('localabstract:glass-agent')).toBe(true);
    expect(isForwardSpec('localfilesystem:/tmp/devicebridge-forward-aB12cD/1.sock')).toBe(true);
    expect(isForwardSpec('localfilesystem:tmp/relative.sock')).toBe(false);
    expect(isForwardSpec('localfilesystem:/tmp/../etc/x.sock')).toBe(false);
    expect(isForwardSpec(`localfilesystem:/${'a'.repeat(MAX_SOCKET_PATH)}`)).toBe(false);
    expect(isForwardSpec(`localfilesystem:/${'a'.repeat(MAX_SOCKET_PATH - 1)}`)).toBe(true);
    expect(isForwardSpec('localreserved:x')).toBe(false);
  });

  it('never accepts a spec that could carry a second spec, a space or a control character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (tail) => {
        for (const prefix of ['tcp:', 'localabstract:', 'localfilesystem:/']) {
          const spec = `${prefix}${tail}`;
          if (/[;\s\0-\x1f\x7f]/.test(tail)) expect(isForwardSpec(spec)).toBe(false);
          if (isForwardSpec(spec) && prefix === 'localfilesystem:/') {
            const file = filesystemSpecPath(spec);
            expect(file).toBe(`/${tail}`);
            expect(Buffer.byteLength(file!)).toBeLessThanOrEqual(MAX_SOCKET_PATH);
          }
        }
      }),
    );
  });

  it('a forward is connected to on the server host for tcp: and at the path for localfilesystem:', () => {
    expect(forwardTarget('tcp:41000', '127.0.0.1')).toEqual({ host: '127.0.0.1', port: 41000 });
    expect(forwardTarget('localfilesystem:/tmp/d/1.sock', '127.0.0.1')).toEqual({ path: '/tmp/d/1.sock' });
    expect(() => forwardTarget('localabstract:x', '127.0.0.1')).toThrow(/neither/);
  });
});

describe('describeLocal (what teardown records show)', () => {
  it('keeps tcp: and abstract specs, and never shows a socket path on the bridge host', () => {
    expect(describeLocal('tcp:41234')).toBe('tcp:41234');
    expect(describeLocal('localfilesystem:/tmp/devicebridge-forward-aB12cD/3.sock')).toBe(
      'localfilesystem:…/3.sock',
    );
    fc.assert(
      fc.property(fc.stringMatching(/^(\/[A-Za-z0-9._-]{1,12}){1,6}$/), (file) => {
        if (file.split('/').includes('..')) return;
        // Only the file name: no directory of the bridge host.
        expect(describeLocal(`localfilesystem:${file}`)).toBe(
          `localfilesystem:…/${file.slice(file.lastIndexOf('/') + 1)}`,
        );
      }),
    );
  });
});

describe('SocketDir', () => {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const parent = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sd-'));
    made.push(dir);
    return dir;
  };

  it('hands out distinct paths in one directory only its user may enter, removed by remove()', async () => {
    const sockets = new SocketDir('devicebridge-forward-', await parent());
    const a = await sockets.next();
    const b = await sockets.next();
    expect(a).not.toBe(b);
    expect(path.dirname(a)).toBe(path.dirname(b));
    expect(statSync(path.dirname(a)).mode & 0o777).toBe(0o700);
    expect(sockets.holds(a)).toBe(true);
    expect(filesystemSpecPath(`localfilesystem:${a}`)).toBe(a);
    await sockets.remove();
    expect(existsSync(path.dirname(a))).toBe(false);
    await sockets.remove(); // idempotent
  });

  it('makes a new directory when a TMPDIR cleaner removed its own', async () => {
    const sockets = new SocketDir('devicebridge-forward-', await parent());
    const a = await sockets.next();
    await rm(path.dirname(a), { recursive: true });
    const b = await sockets.next();
    expect(path.dirname(b)).not.toBe(path.dirname(a));
    expect(statSync(path.dirname(b)).mode & 0o777).toBe(0o700);
    await sockets.remove();
    expect(existsSync(path.dirname(b))).toBe(false);
  });

  it('refuses a path adb cannot carry (long TMPDIR) instead of handing out a broken one', async () => {
    const long = path.join(await parent(), 'x'.repeat(90));
    const { mkdir } = await import('node:fs/promises');
    await mkdir(long);
    await expect(new SocketDir('devicebridge-forward-', long).next()).rejects.toThrow(/over 107 bytes/);
  });

  it('unlinks only socket files of its kind; a killed bridge’s emptied directory goes too', async () => {
    const top = await parent();
    const mine = new SocketDir('devicebridge-forward-', top);
    const theirs = new SocketDir('devicebridge-forward-', top); // "another (killed) bridge"
    const own = await mine.next();
    const stray = await theirs.next();
    await writeFile(own, '');
    await writeFile(stray, '');
    const elsewhere = path.join(top, 'other.sock');
    await writeFile(elsewhere, '');
    expect(mine.holds(stray)).toBe(true);
    expect(mine.holds(elsewhere)).toBe(false);
    await mine.unlink(elsewhere);
    expect(existsSync(elsewhere)).toBe(true);
    await mine.unlink(stray);
    expect(existsSync(stray)).toBe(false);
    expect(existsSync(path.dirname(stray))).toBe(false);
    await mine.unlink(own);
    expect(existsSync(own)).toBe(false);
    expect(existsSync(path.dirname(own)), 'its own directory stays until remove()').toBe(true);
  });
});
