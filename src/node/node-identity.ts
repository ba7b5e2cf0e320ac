/**
 * A bridge node's stable default identity: without a configured node name (DEVICEBRIDGE_NODE), the
 * name is read from `<dataDir>/node-id`, created once (exclusive create, so two processes starting
 * on one data dir agree) as `<host>-<8 hex>`. A restart on the same data dir is the same node: it
 * owns the device records it left behind and picks up the teardowns deferred to it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NODE_NAME_PATTERN } from '../devices/nodes.ts';
import { BridgeError } from '../errors.ts';

export const NODE_ID_FILE = 'node-id';

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
