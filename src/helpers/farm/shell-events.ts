/**
 * The streaming variant of a lease's shell command (issue 14, capability 4): the command's output
 * as chunked NDJSON events while it runs — `{"stream":"stdout"|"stderr","data":BASE64}` per chunk
 * (byte-exact), then one terminal event: `{"exit":CODE,"durationMs":MS}`, or `{"error":{code,
 * message}}` when the deadline passed (TIMEOUT), the lease ended (LEASE_EXPIRED) or the device's
 * stream closed without an exit status (DEVICE_OFFLINE). Every way out that is not an exit closes
 * the adb stream, which ends the process on the device.
 *
 * Backpressure: events are produced only while the HTTP reader pulls. At most `QUEUE_HIGH_BYTES` of
 * encoded events wait here; past that the shell stream's stdout/stderr are paused, their buffers
 * fill, and the adb socket itself is paused (adb/shell-stream.ts), so a slow reader holds the device
 * back instead of growing the bridge's memory. The output also draws from its tenant's pace (the
 * shell gate's, shared with the collected commands): past it both outputs are paused for a while,
 * so a tenant streaming without end is read at its rate and the device waits.
 */
import type { ShellStream } from '../../adb/shell-stream.ts';
import { BridgeError } from '../../errors.ts';
import { TurnBudget } from '../../event-loop-turns.ts';

export type ShellEvent =
  | { stream: 'stdout' | 'stderr'; data: string }
  | { exit: number; durationMs: number }
  | { error: { code: string; message: string } };

/** Encoded events waiting for the reader beyond which the device's output is paused. */
export const QUEUE_HIGH_BYTES = 64 * 1024;
const QUEUE_LOW_BYTES = 16 * 1024;
/**
 * What one streamed command may hold on the node, counted against the shell gate's output budget:
 * the queue past its high mark by one event (an adb packet of up to 256 KiB, base64), and what the
 * paused outputs buffered.
 */
export const STREAM_HELD_BYTES = 512 * 1024;

export interface ShellEventsOptions {
  /** The command's deadline (from the start of the call). */
  timeoutMs: number;
  /** Aborted when the lease ends: the command is closed and the stream ends with LEASE_EXPIRED. */
  signal: AbortSignal;
  /** Called once, when the stream has ended for any reason. */
  onEnd?: () => void;
  /**
   * Count output bytes read; answers how long (ms) to stop reading before more (the tenant's pace,
   * shell-gate.ts). The device's output is paused meanwhile, never dropped.
   */
  pace?: (bytes: number) => number;
}

const encoder = new TextEncoder();

/** One event as its NDJSON line. */
export function encodeShellEvent(event: ShellEvent): Uint8Array {
  return encoder.encode(`${JSON.stringify(event)}\n`);
}

function errorEvent(err: unknown): ShellEvent {
  if (err instanceof BridgeError) return { error: { code: err.code, message: err.message } };
  return { error: { code: 'INTERNAL', message: (err as Error)?.message ?? String(err) } };
}

export function shellEventStream(
  shell: ShellStream,
  options: ShellEventsOptions,
): ReadableStream<Uint8Array> {
  const started = performance.now();
  const queue: Uint8Array[] = [];
  let queuedBytes = 0;
  let finished = false;
  let closed = false;
  /** Paused because the reader is behind (the queue passed QUEUE_HIGH_BYTES). */
  let paused = false;
  /** Paused by the tenant's pace until this timer fires. */
  let pacing: NodeJS.Timeout | undefined;
  const pauseOutput = () => {
    shell.stdout.pause();
    shell.stderr.pause();
  };
  /** Read again, unless the other reason to pause still holds. */
  const resumeOutput = () => {
    if (paused || pacing !== undefined || finished) return;
    shell.stdout.resume();
    shell.stderr.resume();
  };
  const paced = (bytes: number) => {
    const wait = options.pace?.(bytes) ?? 0;
    if (wait <= 0 || pacing !== undefined) return;
    pauseOutput();
    pacing = setTimeout(() => {
      pacing = undefined;
      resumeOutput();
    }, wait);
  };
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const push = (event: ShellEvent) => {
    const line = encodeShellEvent(event);
    queue.push(line);
    queuedBytes += line.length;
    if (!paused && queuedBytes > QUEUE_HIGH_BYTES) {
      paused = true;
      pauseOutput();
    }
    notify();
  };
  const onStdout = (d: Buffer) => {
    push({ stream: 'stdout', data: d.toString('base64') });
    paced(d.length);
  };
  const onStderr = (d: Buffer) => {
    push({ stream: 'stderr', data: d.toString('base64') });
    paced(d.length);
  };
  shell.stdout.on('data', onStdout);
  shell.stderr.on('data', onStderr);

  /** The terminal event (null: the reader left), once; what is queued before it is still delivered. */
  const finish = (last: ShellEvent | null) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    clearTimeout(pacing);
    options.signal.removeEventListener('abort', onLeaseEnd);
    shell.stdout.off('data', onStdout);
    shell.stderr.off('data', onStderr);
    if (last === null || !('exit' in last)) shell.close();
    if (last !== null) push(last);
    else notify();
    options.onEnd?.();
  };
  const timer = setTimeout(
    () =>
      finish(
        errorEvent(
          new BridgeError('TIMEOUT', `the command ran past its deadline of ${options.timeoutMs} ms; closed`, {
            details: { timeoutMs: options.timeoutMs },
          }),
        ),
      ),
    options.timeoutMs,
  );
  const onLeaseEnd = () =>
    finish(
      errorEvent(
        options.signal.reason instanceof BridgeError
          ? options.signal.reason
          : new BridgeError('LEASE_EXPIRED', 'the lease ended; the command was closed'),
      ),
    );
  if (options.signal.aborted) onLeaseEnd();
  else options.signal.addEventListener('abort', onLeaseEnd, { once: true });

  const ended = (s: NodeJS.ReadableStream & { readableEnded: boolean }) =>
    s.readableEnded ? Promise.resolve() : new Promise<void>((r) => s.once('end', () => r()));
  void Promise.all([shell.exit, ended(shell.stdout), ended(shell.stderr)]).then(([code]) =>
    finish(
      code === null
        ? errorEvent(new BridgeError('DEVICE_OFFLINE', 'the shell stream closed before the exit status'))
        : { exit: code, durationMs: Math.round(performance.now() - started) },
    ),
  );

  // A reader that takes every event at once would otherwise keep the event loop for as long as the
  // device's output flows (pulls chain in microtasks).
  const turns = new TurnBudget();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const line = queue.shift();
          if (line !== undefined) {
            queuedBytes -= line.length;
            if (paused && queuedBytes <= QUEUE_LOW_BYTES) {
              paused = false;
              resumeOutput();
            }
            controller.enqueue(line);
            await turns.spend(line.length);
            return;
          }
          if (finished) {
            if (!closed) {
              closed = true;
              controller.close();
            }
            return;
          }
          await new Promise<void>((r) => {
            wake = r;
          });
        }
      },
      cancel() {
        // The reader went away (the client disconnected): close the command on the device.
        finish(null);
        queue.length = 0;
        queuedBytes = 0;
      },
    },
    { highWaterMark: 1 },
  );
}
