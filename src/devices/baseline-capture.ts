/**
 * Reading a device and recording its baseline (the I/O beside `baseline.ts`): one shell round trip
 * for the reading, one `sha256sum` for the APKs of its third-party packages.
 */
import { randomBytes } from 'node:crypto';
import type { ShellOptions, ShellResult } from '../adb/client.ts';
import { shellCommand } from '../adb/shell-quote.ts';
import {
  type BaselinePackage,
  type DeviceBaseline,
  type DeviceReading,
  parseReading,
  quotable,
  readingMarker,
  readingScript,
} from './baseline.ts';
import type { ResetPolicy } from './reset-policy.ts';

/** A device's shell (what reading it needs). */
export interface ShellTarget {
  readonly serial: string;
  shell(command: string, options?: ShellOptions): Promise<ShellResult>;
}

const READ_MS = 60_000;

/** A fresh marker for one script's output (random: the device cannot forge it). */
export function newMarker(): string {
  return readingMarker(() => randomBytes(12).toString('hex'));
}

/** Read what adb can see of the device (one shell round trip). */
export async function readDevice(target: ShellTarget, policy: ResetPolicy): Promise<DeviceReading> {
  const marker = newMarker();
  const result = await target.shell(readingScript(policy, marker), { timeoutMs: READ_MS });
  try {
    return parseReading(result.stdout, marker, policy);
  } catch (err) {
    throw new Error(`reading ${target.serial}: ${(err as Error).message}`);
  }
}

/** sha256 of each APK path (one `sha256sum` round trip); a path whose sum is missing maps to null. */
export async function apkSums(
  target: ShellTarget,
  paths: readonly string[],
): Promise<Map<string, string | null>> {
  const sums = new Map<string, string | null>(paths.map((p) => [p, null]));
  const usable = paths.filter(quotable);
  if (usable.length === 0) return sums;
  const out = await target.shell(`${shellCommand('sha256sum', ...usable)} 2>/dev/null`, {
    timeoutMs: READ_MS,
  });
  for (const line of out.stdout.toString('utf8').split('\n')) {
    const m = /^([0-9a-f]{64}) {1,2}(.+)$/.exec(line.trim());
    if (m && sums.has(m[2]!)) sums.set(m[2]!, m[1]!);
  }
  return sums;
}

/** The baseline of a device as it is now (packages with the sha256 of their APKs). */
export async function captureBaseline(
  target: ShellTarget,
  policy: ResetPolicy,
  now: number,
): Promise<DeviceBaseline> {
  const reading = await readDevice(target, policy);
  const sums = await apkSums(
    target,
    Object.values(reading.packages).map((p) => p.path),
  );
  const packages: Record<string, BaselinePackage> = {};
  for (const [name, p] of Object.entries(reading.packages))
    packages[name] = { ...p, sha256: sums.get(p.path) ?? null };
  return { version: 1, capturedAt: now, ...reading, packages };
}
