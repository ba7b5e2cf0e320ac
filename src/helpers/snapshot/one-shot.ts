/**
 * One-shot helper runs: `am instrument -w ... RUNNER` with a command deadline above the helper's own
 * timeout, output parsed incrementally as it streams in, then interpreted. On timeout or crash the
 * helper is force-stopped so the next run starts clean.
 *
 * Runs of one package on one device take turns (`instrumentationLock`): starting an instrumentation
 * kills a running one of the same package, and a force-stop kills every one. A run holds its turn
 * until its force-stop is done; waiting for the turn counts against the run's deadline.
 */
import { requestDeadline } from '../../adb/deadline.ts';
import { shellCommand } from '../../adb/shell-quote.ts';
import { BridgeError } from '../../errors.ts';
import type { HelperManifest } from '../../manifest/index.ts';
import { SnapshotOutputDecoder } from '../../protocol/helper/chunk-stream.ts';
import { interpretStreamedSnapshot, type SnapshotRunResult } from '../../protocol/helper/chunks.ts';
import { buildInstrumentCommand, type CaptureOptions } from './capture-options.ts';
import type { HelperDevice } from './device.ts';

export type SuccessfulRun = Extract<SnapshotRunResult, { ok: true }>;

export interface OneShotRequest {
  mode: 'snapshot' | 'viewport' | 'gesture';
  capture: CaptureOptions;
  payloadBase64?: string;
  signal?: AbortSignal;
  /** Give up sooner than `timeoutMs` + the slack (what is left of the request's deadline). */
  deadlineMs?: number;
}

/** Slack above the helper's own `timeoutMs` before the bridge gives up on the command. */
export const COMMAND_DEADLINE_SLACK_MS = 10_000;

export async function forceStop(device: HelperDevice, packageName: string): Promise<void> {
  await device
    .shell(shellCommand('am', 'force-stop', packageName), { timeoutMs: 10_000 })
    .catch(() => undefined);
}

/** The per-device exclusive lock every `am instrument` of `packageName` holds while it runs. */
export function instrumentationLock(packageName: string): string {
  return `instrumentation:${packageName}`;
}

/**
 * Force-stop the package in its turn: after a running one-shot of it ends, not under it. Past
 * `waitMs` of waiting it stops the package all the same (a process must not outlive its owner).
 */
export async function forceStopInTurn(
  device: HelperDevice,
  packageName: string,
  waitMs = 15_000,
): Promise<void> {
  await device.locks
    .withExclusive(device.serial, instrumentationLock(packageName), () => forceStop(device, packageName), {
      timeoutMs: waitMs,
    })
    .catch(() => forceStop(device, packageName));
}

export async function runOneShot(
  device: HelperDevice,
  manifest: HelperManifest,
  request: OneShotRequest,
): Promise<SuccessfulRun> {
  if (manifest.instrumentationRunner === undefined) {
    throw new BridgeError('INVALID_ARGUMENT', `manifest ${manifest.name} has no instrumentationRunner`);
  }
  const requested = request.deadlineMs ?? request.capture.timeoutMs + COMMAND_DEADLINE_SLACK_MS;
  // Waiting for the turn counts against the run's deadline: the run gets what remains of it.
  const deadline = requestDeadline({ deadlineMs: requested });
  return device.locks
    .withExclusive(
      device.serial,
      instrumentationLock(manifest.packageName),
      () =>
        runLocked(device, manifest, {
          ...request,
          deadlineMs: deadline.remainingMs(),
        }),
      { timeoutMs: requested, ...(request.signal ? { signal: request.signal } : {}) },
    )
    .catch((err: unknown) => {
      // Cancelled while waiting for the turn: the caller's reason, as when cancelled while running.
      if (request.signal?.aborted && request.signal.reason instanceof BridgeError)
        throw request.signal.reason;
      throw err;
    });
}

async function runLocked(
  device: HelperDevice,
  manifest: HelperManifest & { instrumentationRunner: string },
  request: OneShotRequest,
): Promise<SuccessfulRun> {
  const command = buildInstrumentCommand({
    runner: manifest.instrumentationRunner,
    mode: request.mode,
    capture: request.capture,
    ...(request.payloadBase64 === undefined ? {} : { payloadBase64: request.payloadBase64 }),
  });
  // Chunks are base64-decoded into one buffer as the output streams in; their text is never kept.
  const decoder = new SnapshotOutputDecoder();
  const deadlineMs = Math.min(
    request.capture.timeoutMs + COMMAND_DEADLINE_SLACK_MS,
    request.deadlineMs ?? Number.POSITIVE_INFINITY,
  );
  let stream: Awaited<ReturnType<HelperDevice['shellStream']>>;
  try {
    stream = await device.shellStream(command, {
      timeoutMs: deadlineMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
  } catch (err) {
    // Abandoned while opening: the device may have started the helper all the same.
    if (request.signal?.aborted) {
      await forceStop(device, manifest.packageName);
      if (request.signal.reason instanceof BridgeError) throw request.signal.reason;
    }
    throw err;
  }
  stream.stdout.on('data', (d: Buffer) => decoder.push(d));
  // The run's deadline and the caller's cancellation, as one signal.
  const deadline = requestDeadline({ deadlineMs, signals: [request.signal], expired: () => 'timeout' });
  const gaveUp = new Promise<'timeout' | 'aborted'>((resolve) => {
    const onAbort = () => resolve(deadline.timedOut ? 'timeout' : 'aborted');
    if (deadline.signal.aborted) onAbort();
    else deadline.signal.addEventListener('abort', onAbort, { once: true });
  });
  const outcome = await Promise.race([stream.exit, gaveUp]);
  deadline.dispose();
  if (outcome === 'timeout' || outcome === 'aborted') {
    stream.close();
    await forceStop(device, manifest.packageName);
    if (outcome === 'aborted' && request.signal?.reason instanceof BridgeError) throw request.signal.reason;
    throw new BridgeError(
      'TIMEOUT',
      `helper ${request.mode} on ${device.serial} gave no result within ${deadlineMs} ms`,
      {
        details: { serial: device.serial, mode: request.mode, deadlineMs, forceStopped: true },
      },
    );
  }
  const result = interpretStreamedSnapshot(decoder.end(), { mode: request.mode });
  if (!result.ok) {
    if (result.error.details?.['reason'] === 'crashed' || result.error.code === 'HELPER_PROTOCOL_ERROR') {
      await forceStop(device, manifest.packageName);
    }
    throw result.error;
  }
  return result;
}
