/**
 * Device properties and ids (pure). `getprop` with no argument prints every system property as
 * `[key]: [value]` lines; a value may span lines (it then ends at the first line that ends with `]`
 * and is followed by the next `[key]: [` line or the end of the output).
 */
import { BridgeError } from '../errors.ts';
import { DEVICE_ID_PATTERN } from './labels.ts';
import type { DeviceProperties } from './types.ts';

const ENTRY_START = /^\[([^\]\r\n]+)\]: \[(.*)$/;
const MAX_TEXT = 200;

/** Parse full `getprop` output. Never throws; lines that are not part of an entry are ignored. */
export function parseGetprop(output: string): Map<string, string> {
  const props = new Map<string, string>();
  const lines = output.replace(/\r\n/g, '\n').split('\n');
  let end = lines.length;
  while (end > 0 && lines[end - 1] === '') end -= 1;
  let i = 0;
  while (i < end) {
    const start = ENTRY_START.exec(lines[i]!);
    i += 1;
    if (start === null) continue;
    const key = start[1]!;
    const parts = [start[2]!];
    // The value ends at a line ending with `]` that is followed by another entry or the end.
    let closed = false;
    for (;;) {
      const last = parts[parts.length - 1]!;
      const next = i < end ? lines[i] : undefined;
      if (last.endsWith(']') && (next === undefined || ENTRY_START.test(next))) {
        closed = true;
        break;
      }
      if (next === undefined) break;
      parts.push(next);
      i += 1;
    }
    if (!closed) break; // truncated output: drop the unterminated last entry
    const value = parts.join('\n');
    props.set(key, value.slice(0, -1));
  }
  return props;
}

function text(props: ReadonlyMap<string, string>, key: string): string | undefined {
  const value = props.get(key)?.trim();
  if (value === undefined || value === '') return undefined;
  return value.slice(0, MAX_TEXT);
}

/** The properties the registry keeps: sdk, release, model, manufacturer, abi. Absent when unknown. */
export function devicePropertiesFrom(props: ReadonlyMap<string, string>): DeviceProperties {
  const out: DeviceProperties = {};
  const sdk = text(props, 'ro.build.version.sdk');
  if (sdk !== undefined && /^\d{1,4}$/.test(sdk)) out.sdk = Number(sdk);
  const release = text(props, 'ro.build.version.release');
  if (release !== undefined) out.release = release;
  const model = text(props, 'ro.product.model');
  if (model !== undefined) out.model = model;
  const manufacturer = text(props, 'ro.product.manufacturer');
  if (manufacturer !== undefined) out.manufacturer = manufacturer;
  const abi = text(props, 'ro.product.cpu.abi');
  if (abi !== undefined) out.abi = abi;
  return out;
}

export { DEVICE_ID_PATTERN };

const SERIAL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/;

/**
 * A stable, URL-safe device id for an adb serial or a `host:port` endpoint: `127.0.0.1:5555` →
 * `127.0.0.1-5555`, `[fd00::1]:5555` → `fd00--1-5555`, `emulator-5554` stays. Host names are
 * lower-cased (the same endpoint always gives the same id). Refuses (INVALID_ARGUMENT) anything
 * with other characters, `..`, or longer than 128 characters once mapped.
 */
export function deviceIdFor(serialOrEndpoint: string): string {
  const refuse = (rule: string): never => {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `cannot derive a device id from ${JSON.stringify(serialOrEndpoint.slice(0, 80))}: ${rule}`,
      { details: { serial: serialOrEndpoint.slice(0, 200) } },
    );
  };
  if (typeof serialOrEndpoint !== 'string' || serialOrEndpoint.length === 0) refuse('it is empty');
  if (serialOrEndpoint.length > 128) refuse('it is longer than 128 characters');
  if (!SERIAL_PATTERN.test(serialOrEndpoint)) {
    refuse('only letters, digits, ".", "_", "-", ":" (and a bracketed IPv6 host) are allowed');
  }
  if (serialOrEndpoint.includes('..')) refuse('".." is not allowed');
  const isEndpoint = /:\d{1,5}$/.test(serialOrEndpoint);
  const base = isEndpoint ? serialOrEndpoint.toLowerCase() : serialOrEndpoint;
  const id = base.replace(/[[\]]/g, '').replace(/:/g, '-');
  if (!DEVICE_ID_PATTERN.test(id)) refuse('the mapped id is not URL-safe');
  return id;
}
