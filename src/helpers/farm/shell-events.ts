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
 * back instead of growing the bridge's memory.
 */
import type { ShellStream } from '../../adb/shell-stream.ts';
import { BridgeError } from '../../errors.ts';

export type ShellEvent =
  | { stream: 'stdout' | 'stderr'; data: string }
  | { exit: number; durationMs: number }
  | { error: { code: string; message: string } };

/** Encoded events waiting for the reader beyond which the device's output is paused. */
export const QUEUE_HIGH_BYTES = 64 * 1024;
const QUEUE_LOW_BYTES = 16 * 1024;

export interface ShellEventsOptions {
  /** The command's deadline (from the start of the call). */
  timeoutMs: number;
  /** Aborted when the lease ends: the command is closed and the stream ends with LEASE_EXPIRED. */
  signal: AbortSignal;
  /** Called once, when the stream has ended for any reason. */
  onEnd?: () => void;
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
  let paused = false;
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
      shell.stdout.pause();
      shell.stderr.pause();
    }
    notify();
  };
  const onStdout = (d: Buffer) => push({ stream: 'stdout', data: d.toString('base64') });
  const onStderr = (d: Buffer) => push({ stream: 'stderr', data: d.toString('base64') });
  shell.stdout.on('data', onStdout);
  shell.stderr.on('data', onStderr);

  /** The terminal event (null: the reader left), once; what is queued before it is still delivered. */
  const finish = (last: ShellEvent | null) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
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

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const line = queue.shift();
          if (line !== undefined) {
            queuedBytes -= line.length;
            if (paused && queuedBytes <= QUEUE_LOW_BYTES) {
              paused = false;
              shell.stdout.resume();
              shell.stderr.resume();
            }
            controller.enqueue(line);
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
