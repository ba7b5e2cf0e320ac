/**
 * Pieces of the emulated snapshot helper shared by its one-shot run and its persistent session:
 * protocol constants, extras parsing, capture, viewport, gesture injection and chunking.
 *
 * Result codes follow the real helper: `finish(0, result)` on success, `finish(1, result)` when it
 * reports ok=false; a crash or force-stop is `am`'s own `shortMsg=Process crashed.` with code 0.
 */
import { countInjectedEvents, decodeTouchPlanBase64 } from '../../protocol/helper/touch-plan.ts';
import type { SimDevice } from '../types.ts';
import { type Bundle, formatStatus } from './am-output.ts';
import { activeViewport, captureUiXml } from './ui-capture.ts';

export const HELPER_PROTOCOL = 'android-snapshot-helper-v1';
export const HELPER_API_VERSION = '2';
export const HELPER_OUTPUT_FORMAT = 'uiautomator-xml';
export const CHUNK_BYTES = 2 * 1024;
export const RESULT_CODE_OK = 0;
export const RESULT_CODE_ERROR = 1;
export const STATUS_CODE_CHUNK = 1;
export const STATUS_CODE_SESSION_READY = 2;

export const DEFAULTS = {
  waitForIdleTimeoutMs: 500,
  waitForIdleQuietMs: 100,
  timeoutMs: 8000,
  maxDepth: 128,
  maxNodes: 5000,
} as const;

export interface HelperOptions {
  waitForIdleTimeoutMs: number;
  waitForIdleQuietMs: number;
  timeoutMs: number;
  maxDepth: number;
  maxNodes: number;
}

/** A Java exception the helper reports as `errorType`/`message`. */
export class HelperFailure extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

export const protocolBundle = (): Bundle => [
  ['agentDeviceProtocol', HELPER_PROTOCOL],
  ['helperApiVersion', HELPER_API_VERSION],
  ['outputFormat', HELPER_OUTPUT_FORMAT],
];

export function metadataBundle(o: HelperOptions): Bundle {
  return [
    ...protocolBundle(),
    ['waitForIdleTimeoutMs', String(o.waitForIdleTimeoutMs)],
    ['waitForIdleQuietMs', String(o.waitForIdleQuietMs)],
    ['timeoutMs', String(o.timeoutMs)],
    ['maxDepth', String(o.maxDepth)],
    ['maxNodes', String(o.maxNodes)],
  ];
}

export function errorBundle(error: unknown): Bundle {
  const failure =
    error instanceof HelperFailure ? error : new HelperFailure('java.lang.RuntimeException', String(error));
  return [
    ['ok', 'false'],
    ['errorType', failure.errorType],
    ['message', failure.message],
  ];
}

const INT_MAX = 2n ** 31n - 1n;
const INT_MIN = -(2n ** 31n);
const LONG_MAX = 2n ** 63n - 1n;
const LONG_MIN = -(2n ** 63n);

/** Java's Integer/Long.parseInt of a trimmed extra, clamped at 0 like the helper; empty → default. */
export function numberExtra(
  extras: ReadonlyMap<string, string>,
  key: string,
  fallback: number,
  bits: 32 | 64,
): number {
  const raw = extras.get(key)?.trim();
  if (raw === undefined || raw === '') return fallback;
  const ok = /^[+-]?\d+$/.test(raw);
  const value = ok ? BigInt(raw) : undefined;
  const [min, max] = bits === 32 ? [INT_MIN, INT_MAX] : [LONG_MIN, LONG_MAX];
  if (value === undefined || value < min || value > max) {
    throw new HelperFailure('java.lang.NumberFormatException', `For input string: "${raw}"`);
  }
  return value < 0n ? 0 : Number(value);
}

export function readOptions(extras: ReadonlyMap<string, string>): HelperOptions {
  return {
    waitForIdleTimeoutMs: numberExtra(extras, 'waitForIdleTimeoutMs', DEFAULTS.waitForIdleTimeoutMs, 64),
    waitForIdleQuietMs: numberExtra(extras, 'waitForIdleQuietMs', DEFAULTS.waitForIdleQuietMs, 64),
    timeoutMs: numberExtra(extras, 'timeoutMs', DEFAULTS.timeoutMs, 64),
    maxDepth: numberExtra(extras, 'maxDepth', DEFAULTS.maxDepth, 32),
    maxNodes: numberExtra(extras, 'maxNodes', DEFAULTS.maxNodes, 32),
  };
}

export function stringExtra(extras: ReadonlyMap<string, string>, key: string): string | undefined {
  const raw = extras.get(key)?.trim();
  return raw === undefined || raw === '' ? undefined : raw;
}

/** The device's clock when it has one (contract tests freeze it), else the process's. */
const clock = (device: SimDevice): number => device.now?.() ?? performance.now();

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The helper's bounded idle wait. Emulated as at most one millisecond: the simulated UI is always
 * idle, and the real helper only waits for the quiet window once the accessibility stream settles.
 */
async function waitForIdle(o: HelperOptions): Promise<void> {
  if (o.waitForIdleTimeoutMs > 0) await tick(Math.min(1, o.waitForIdleQuietMs, o.waitForIdleTimeoutMs));
}

export interface Capture {
  xml: string;
  bytes: Buffer;
  fields: Bundle;
}

/**
 * The simulator's own cost, not the contract: the screen rarely changes between snapshots, so the
 * last capture's UTF-8 bytes and its chunk records' text are kept and reused (the bytes are never
 * written to: they are only sliced, copied or sent).
 */
let lastBytes: { xml: string; bytes: Buffer } | null = null;
let lastChunkOutput: { bytes: Buffer; text: string } | null = null;

function utf8Of(xml: string): Buffer {
  if (lastBytes !== null && lastBytes.xml === xml) return lastBytes.bytes;
  const bytes = Buffer.from(xml, 'utf8');
  lastBytes = { xml, bytes };
  return bytes;
}

/** `chunkRecords(device, bytes).join('')`; reused for the same bytes when the device has no chunk fault. */
export function chunkOutput(device: SimDevice, bytes: Buffer): string {
  if (device.faults.chunk !== undefined) return chunkRecords(device, bytes).join('');
  if (lastChunkOutput !== null && lastChunkOutput.bytes === bytes) return lastChunkOutput.text;
  const text = chunkRecords(device, bytes).join('');
  lastChunkOutput = { bytes, text };
  return text;
}

export async function capture(device: SimDevice, o: HelperOptions): Promise<Capture> {
  const started = clock(device);
  await waitForIdle(o);
  const result = captureUiXml(device.uiXml(), o.maxDepth, o.maxNodes);
  const bytes = utf8Of(result.xml);
  const elapsedMs = Math.round(clock(device) - started);
  return {
    xml: result.xml,
    bytes,
    fields: [
      ['rootPresent', String(result.rootPresent)],
      ['captureMode', result.captureMode],
      ['windowCount', String(result.windowCount)],
      ['nodeCount', String(result.nodeCount)],
      ['truncated', String(result.truncated)],
      ['elapsedMs', String(elapsedMs)],
    ],
  };
}

export function viewportFields(device: SimDevice): Bundle {
  const rect = activeViewport(device.uiXml());
  if (rect === undefined) {
    throw new HelperFailure(
      'java.lang.IllegalStateException',
      'Active application interaction viewport is unavailable',
    );
  }
  return [
    ['ok', 'true'],
    ['kind', 'viewport'],
    ['x', String(rect.x)],
    ['y', String(rect.y)],
    ['width', String(rect.width)],
    ['height', String(rect.height)],
  ];
}

/** Validate and "inject" a touch plan. The emulated injection takes a few ms, not the plan's duration. */
export async function injectGesture(device: SimDevice, payloadBase64: string | undefined): Promise<Bundle> {
  const started = clock(device);
  if (payloadBase64 === undefined || payloadBase64 === '') {
    throw new HelperFailure('java.lang.IllegalArgumentException', 'Missing payloadBase64');
  }
  const decoded = decodeTouchPlanBase64(payloadBase64);
  if (!decoded.valid) {
    const message = decoded.errors
      .map((e) => (e.path === '' ? e.message : `${e.path}: ${e.message}`))
      .join('; ');
    throw new HelperFailure('java.lang.IllegalArgumentException', message);
  }
  const plan = decoded.plan;
  device.recordInput({ ...plan });
  if (plan.pointers.length === 1) device.touch?.(plan.pointers[0]!.samples);
  await tick(Math.min(plan.durationMs, 5));
  // The real injector paces events over durationMs; report that, plus the time we actually spent.
  const elapsedMs = plan.durationMs + Math.round(clock(device) - started);
  return [
    ['ok', 'true'],
    ['kind', plan.kind],
    ['injectedEvents', String(countInjectedEvents(plan))],
    ['elapsedMs', String(elapsedMs)],
  ];
}

/** `chunkIndex`/`chunkCount`/`payloadBase64` status records, with the device's chunk fault applied. */
export function chunkRecords(device: SimDevice, bytes: Buffer): string[] {
  const random = (): number => device.random();
  const chunkCount = Math.max(1, Math.ceil(bytes.length / CHUNK_BYTES));
  const fault = device.faults.chunk;
  const records: string[] = [];
  for (let index = 0; index < chunkCount; index += 1) {
    let payload = bytes.subarray(index * CHUNK_BYTES, (index + 1) * CHUNK_BYTES).toString('base64');
    const faulty = fault !== undefined && fault.index === index;
    if (faulty && fault.action === 'drop') continue;
    if (faulty && fault.action === 'corrupt') {
      // Damage the text the way a bad line would: one base64 character replaced by a non-alphabet one.
      const at = Math.floor(payload.length / 2);
      payload = `${payload.slice(0, at)}!${payload.slice(at + 1)}`;
    }
    const record = formatStatus(
      [
        ...protocolBundle(),
        ['chunkIndex', String(index)],
        ['chunkCount', String(chunkCount)],
        ['payloadBase64', payload],
      ],
      STATUS_CODE_CHUNK,
      random,
    );
    records.push(record);
    if (faulty && fault.action === 'duplicate') records.push(record);
  }
  return records;
}
