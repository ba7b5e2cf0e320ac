/** The persisted node identity: the `node-id` parser (property-based), fresh names, create-once. */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NODE_NAME_PATTERN } from '../../src/config.ts';
import { isBridgeError } from '../../src/errors.ts';
import {
  lockDataDir,
  NODE_LOCK_FILE,
  newNodeId,
  nodeIdentity,
  parseNodeId,
} from '../../src/node/node-identity.ts';

describe('parseNodeId', () => {
  it('accepts exactly the node names of the one pattern, whitespace around ignored', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.constantFrom('', '\n', ' \n', '\t'), (text, pad) => {
        const trimmed = text.trim();
        let parsed: string | undefined;
        try {
          parsed = parseNodeId(`${pad}${text}${pad}`);
        } catch (err) {
          expect(isBridgeError(err) && err.code === 'INVALID_ARGUMENT').toBe(true);
          expect((err as Error).message).toContain('node-id');
        }
        expect(parsed !== undefined).toBe(NODE_NAME_PATTERN.test(trimmed));
        if (parsed !== undefined) expect(parsed).toBe(trimmed);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses an empty file, two names and an over-long name', () => {
    for (const text of ['', '\n', 'a b', 'a\nb', 'x'.repeat(65), 'name/with/slash']) {
      expect(() => parseNodeId(text), JSON.stringify(text)).toThrow(/node-id must hold one node name/);
    }
  });
});

describe('newNodeId', () => {
  it('is a valid node name for any host name, and differs between calls', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (host) => {
        expect(newNodeId(host)).toMatch(NODE_NAME_PATTERN);
      }),
    );
    expect(newNodeId('h')).not.toBe(newNodeId('h'));
  });
});

describe('nodeIdentity', () => {
  it('creates the identity once and reads it back; a configured name wins; a corrupt file is refused', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'devicebridge-node-id-'));
    try {
      const data = path.join(dir, 'data');
      const [a, b] = await Promise.all([nodeIdentity(undefined, data), nodeIdentity(undefined, data)]);
      expect(a).toBe(b);
      expect(await nodeIdentity(undefined, data)).toBe(a);
      expect(await nodeIdentity('configured-1', data)).toBe('configured-1');
      await writeFile(path.join(data, 'node-id'), 'two words\n');
      await expect(nodeIdentity(undefined, data)).rejects.toThrow(/node-id must hold one node name/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('lockDataDir (one live process per data dir)', () => {
  it('refuses a data dir another live process holds, naming it and the settings; takes a dead holder over', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'devicebridge-node-lock-'));
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', 'serve'], {
      stdio: 'ignore',
    });
    try {
      const lockFile = path.join(dir, NODE_LOCK_FILE);
      const lock = await lockDataDir(dir);
      expect((await readFile(lockFile, 'utf8')).trim()).toBe(String(process.pid));
      await lock.release();
      await expect(readFile(lockFile, 'utf8')).rejects.toThrow(/ENOENT/);

      await writeFile(lockFile, `${other.pid}\n`);
      const refused = await lockDataDir(dir).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isBridgeError(refused) && refused.code === 'INVALID_ARGUMENT').toBe(true);
      expect((refused as Error).message).toContain(`pid ${other.pid}`);
      expect((refused as Error).message).toContain(dir);
      expect((refused as Error).message).toMatch(/DEVICEBRIDGE_DATA_DIR.*DEVICEBRIDGE_NODE/);
      expect((await readFile(lockFile, 'utf8')).trim()).toBe(String(other.pid));

      const exited = new Promise((resolve) => other.once('exit', resolve));
      other.kill('SIGKILL');
      await exited;
      const taken = await lockDataDir(dir); // the holder is dead: a stale lock
      expect((await readFile(lockFile, 'utf8')).trim()).toBe(String(process.pid));
      await taken.release();

      await writeFile(lockFile, '1\n'); // a live process that is no bridge (e.g. a container's init)
      await (await lockDataDir(dir)).release();
      await writeFile(lockFile, 'garbage\n'); // unreadable: stale too
      await (await lockDataDir(dir)).release();
    } finally {
      other.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
