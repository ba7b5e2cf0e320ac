/**
 * Parse one NDJSON line of a streamed shell command (`POST /v1/leases/{id}/shell/stream`, the
 * ShellEvent schema in api/farm.ts) into a typed event; pure and without zod, so the client stays
 * light. Anything that is not exactly one of the three event shapes is refused (null), naming nothing
 * it does not know: a reader treats a null as a broken stream.
 */

import { isShellEventData } from '../api/shell-event-data.ts';

/** One event as the client hands it out: output bytes decoded, terminal events as sent. */
export type ShellStreamEvent =
  | { stream: 'stdout' | 'stderr'; data: Uint8Array }
  | { exit: number; durationMs: number }
  | { error: { code: string; message: string } };

function keysAre(o: object, keys: string[]): boolean {
  const own = Object.keys(o);
  return own.length === keys.length && keys.every((k) => own.includes(k));
}

export function parseShellEventLine(line: string): ShellStreamEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  if (keysAre(o, ['stream', 'data'])) {
    const { stream, data } = o;
    if ((stream !== 'stdout' && stream !== 'stderr') || typeof data !== 'string') return null;
    if (!isShellEventData(data)) return null;
    return { stream, data: new Uint8Array(Buffer.from(data, 'base64')) };
  }
  if (keysAre(o, ['exit', 'durationMs'])) {
    const { exit, durationMs } = o;
    if (!Number.isInteger(exit) || (exit as number) < 0 || (exit as number) > 255) return null;
    if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs < 0) return null;
    return { exit: exit as number, durationMs };
  }
  if (keysAre(o, ['error'])) {
    const e = o['error'];
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return null;
    const { code, message } = e as Record<string, unknown>;
    if (!keysAre(e, ['code', 'message']) || typeof code !== 'string' || code === '') return null;
    if (typeof message !== 'string') return null;
    return { error: { code, message } };
  }
  return null;
}
