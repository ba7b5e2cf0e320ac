/**
 * A bridge node's stable default identity: without a configured node name (DEVICEBRIDGE_NODE), the
 * name is read from `<dataDir>/node-id`, created once (exclusive create, so two processes starting
 * on one data dir agree) as `<host>-<8 hex>`. A restart on the same data dir is the same node: it
 * owns the device records it left behind and picks up the teardowns deferred to it.
 *
 * One identity, one live process: the process using the data dir's identity holds `<dataDir>/node.lock`
 * (its pid, exclusive create). A second process on the same data dir is refused while that pid is
 * alive — otherwise both would be the same node and the second's start would delete the first's
 * simulated device records; a lock whose pid is dead (a crash) is stale and taken over.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NODE_NAME_PATTERN } from '../config.ts';
import { BridgeError } from '../errors.ts';

export const NODE_ID_FILE = 'node-id';
export const NODE_LOCK_FILE = 'node.lock';

/** The node name a `node-id` file holds (surrounding whitespace ignored); INVALID_ARGUMENT otherwise. */
export function parseNodeId(text: string, file = NODE_ID_FILE): string {
  const name = text.trim();
  if (!NODE_NAME_PATTERN.test(name)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `${file} must hold one node name matching [A-Za-z0-9._-]{1,64} (delete it to get a new identity, or set DEVICEBRIDGE_NODE)`,
      { details: { file } },
    );
  }
  return name;
}

/** A fresh node name: this host's name (made name-safe, at most 40 characters) and 8 random hex digits. */
export function newNodeId(hostname = os.hostname()): string {
  const host = hostname.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 40) || 'node';
  return `${host}-${randomBytes(4).toString('hex')}`;
}

/** The configured name, else the data dir's persisted identity (created on first use). */
export async function nodeIdentity(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured !== undefined) return configured;
  const file = path.join(dataDir, NODE_ID_FILE);
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(file, `${newNodeId()}\n`, { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return parseNodeId(await readFile(file, 'utf8'), file);
}

/**
 * Is `pid` a live bridge process (another user's counts: EPERM)? Where /proc exists its command line
 * must have `serve`: in a container restarted on a kept data dir the old pid may now be another
 * process (e.g. the init), which must not block the start forever.
 */
function bridgeAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('serve');
  } catch {
    return true;
  }
}

/**
 * Hold the data dir for this process: `<dataDir>/node.lock` holds our pid. INVALID_ARGUMENT naming the
 * data dir, the holder's pid and the settings when another live process holds it; a lock of a dead
 * (or unreadable) pid is taken over. `release()` removes the lock while it is still ours. A lock of
 * this very process is shared (several device sides in one process, as tests run them).
 */
export async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  const file = path.join(dataDir, NODE_LOCK_FILE);
  await mkdir(dataDir, { recursive: true });
  const release = async (): Promise<void> => {
    const held = await readFile(file, 'utf8').catch(() => '');
    if (Number(held.trim()) === process.pid) await rm(file, { force: true });
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      return { release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text === null) continue; // removed meanwhile: try again
    const pid = Number(text.trim());
    if (pid === process.pid) return { release };
    if (Number.isSafeInteger(pid) && pid > 0 && bridgeAlive(pid)) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `another bridge process (pid ${pid}) is running on the data dir ${dataDir} and would be the same node: ` +
          'give each process its own data dir (--data-dir or DEVICEBRIDGE_DATA_DIR) or its own node name (DEVICEBRIDGE_NODE)',
        { details: { dataDir, pid, file } },
      );
    }
    await rm(file, { force: true }); // stale: its process is gone
  }
  throw new BridgeError('UNAVAILABLE', `could not take the lock ${file}: it keeps changing`, {
    retryable: true,
    details: { file },
  });
}
