/**
 * The devices file (`DEVICEBRIDGE_DEVICES_FILE`): a JSON array `[{endpoint, labels?, provider?}]`.
 * Every entry is validated (shape, labels, provider, the tunnel policy) before any is registered;
 * errors name the file and the entry index.
 */
import { readFile } from 'node:fs/promises';
import { BridgeError, invalidArgument, isBridgeError } from '../errors.ts';
import { parseStrictJson } from '../strict-json.ts';
import type { EndpointPolicy } from './endpoint-policy.ts';
import { validateLabels, validateProvider } from './labels.ts';

export const MAX_CONFIG_ENTRIES = 10_000;

/** What one entry registers (source `config`). */
export interface ConfigEntry {
  endpoint: string;
  labels: Record<string, string>;
  provider?: string;
  source: 'config';
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Re-throw an error with `prefix` in its message (BridgeErrors keep their code and details). */
export function prefixed(err: unknown, prefix: string, extra: Record<string, unknown>): BridgeError {
  if (isBridgeError(err)) {
    return new BridgeError(err.code, `${prefix}: ${err.message}`, {
      details: { ...(err.details ?? {}), ...extra },
      retryable: err.retryable,
      cause: err,
    });
  }
  return new BridgeError('INTERNAL', `${prefix}: ${message(err)}`, { details: extra, cause: err });
}

/** Read and validate the devices file at `path`; every entry passes, or the first refusal is thrown. */
export async function readDevicesFile(
  path: string,
  policy: Pick<EndpointPolicy, 'check'>,
): Promise<ConfigEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new BridgeError('INVALID_ARGUMENT', `device config ${path}: cannot read (${message(err)})`);
  }
  let entries: unknown;
  try {
    entries = parseStrictJson(text);
  } catch (err) {
    throw new BridgeError('INVALID_ARGUMENT', `device config ${path}: ${message(err)}`, {
      ...(isBridgeError(err) && err.details !== undefined ? { details: err.details } : {}),
    });
  }
  if (!Array.isArray(entries)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `device config ${path}: must be a JSON array of {endpoint, labels?, provider?}`,
    );
  }
  if (entries.length > MAX_CONFIG_ENTRIES) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `device config ${path}: more than ${MAX_CONFIG_ENTRIES} entries`,
    );
  }
  const requests: ConfigEntry[] = [];
  for (const [index, entry] of entries.entries()) {
    const where = `device config ${path} entry ${index}`;
    try {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        throw invalidArgument('must be an object {endpoint, labels?, provider?}');
      }
      const unknown = Object.keys(entry).filter((k) => !['endpoint', 'labels', 'provider'].includes(k));
      if (unknown.length > 0) throw invalidArgument(`unknown field(s) ${unknown.join(', ')}`);
      const raw = entry as Record<string, unknown>;
      const decision = await policy.check(raw['endpoint']);
      const labels = validateLabels(raw['labels']);
      const provider = validateProvider(raw['provider']);
      requests.push({
        endpoint: decision.endpoint,
        labels,
        ...(provider === undefined ? {} : { provider }),
        source: 'config',
      });
    } catch (err) {
      throw prefixed(err, where, { entry: index, file: path });
    }
  }
  return requests;
}
