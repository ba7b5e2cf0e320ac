/**
 * Loads `lua/*.lua` once at startup and registers each on an ioredis client with `defineCommand`
 * (EVALSHA, falling back to EVAL after a SCRIPT FLUSH or on a fresh server). Negative integer replies
 * are lease failures mapped to BridgeErrors through the one table in `errors.ts`.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { isLeaseFailure, leaseError } from './errors.ts';

export const SCRIPT_NAMES = [
  'acquire',
  'renew',
  'release',
  'claim-expired',
  'check-fence',
  'lease-of-device',
  'list-active',
  'enqueue',
  'dequeue',
  'waiting',
  'record-teardown',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

const READ_ONLY = new Set<ScriptName>(['check-fence', 'lease-of-device', 'list-active']);

let sources: Map<ScriptName, string> | undefined;

/** The script sources, read from disk on first use. */
export function scriptSources(): Map<ScriptName, string> {
  if (!sources) {
    sources = new Map(
      SCRIPT_NAMES.map((name) => [name, readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8')]),
    );
  }
  return sources;
}

function commandName(name: ScriptName): string {
  return `devicebridgeLease_${name.replace(/-/g, '_')}`;
}

type ScriptCommand = (numberOfKeys: number, ...args: Array<string | number>) => Promise<unknown>;

export class LeaseScripts {
  readonly #client: Redis;

  constructor(client: Redis) {
    this.#client = client;
    for (const [name, lua] of scriptSources()) {
      // No numberOfKeys: every call passes it first, so scripts take a variable number of keys.
      client.defineCommand(commandName(name), { lua, readOnly: READ_ONLY.has(name) });
    }
  }

  /**
   * Run a script. Throws the mapped BridgeError when it replies with a negative failure code;
   * otherwise resolves its raw reply.
   */
  async run(
    name: ScriptName,
    keys: string[],
    args: Array<string | number>,
    details: Record<string, unknown> = {},
  ): Promise<unknown> {
    const command = (this.#client as unknown as Record<string, ScriptCommand>)[commandName(name)];
    if (command === undefined) throw new Error(`lease script ${name} is not defined`);
    const reply = await command.call(this.#client, keys.length, ...keys, ...args);
    if (isLeaseFailure(reply)) throw leaseError(reply, details);
    return reply;
  }
}
