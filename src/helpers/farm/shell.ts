/**
 * One shell command on a leased device (issue 14, capability 4): built from an argv array through
 * the one quoting function (or taken as the caller's command line), run over the shell protocol v2
 * (real stdout, stderr and exit status) under one deadline, each output cut at a byte cap (the
 * rest is read and dropped, so the command is never blocked by the cap and memory stays bounded).
 */
import type { AdbClient } from '../../adb/client.ts';
import { withDeadline } from '../../adb/deadline.ts';
import { quoteShellArg } from '../../adb/shell-quote.ts';
import { BridgeError } from '../../errors.ts';

/** An argv array (quoted here) or a command line the caller wants run by the device's shell. */
export type ShellInput = { argv: readonly string[] } | { command: string };

export interface ShellRun {
  timeoutMs: number;
  /** Cap of stdout and of stderr, each. */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

export interface ShellOutcome {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  truncated: boolean;
  durationMs: number;
}

/** The command line `adb shell` receives: argv quoted argument by argument, a command line as given. */
export function shellLine(input: ShellInput): string {
  if ('argv' in input) {
    if (input.argv.length === 0) throw new BridgeError('INVALID_ARGUMENT', 'argv: the command is missing');
    return input.argv.map(quoteShellArg).join(' ');
  }
  if (input.command.includes('\0'))
    throw new BridgeError('INVALID_ARGUMENT', 'command: contains NUL, which adb shell cannot carry');
  if (input.command.trim() === '') throw new BridgeError('INVALID_ARGUMENT', 'command: is empty');
  return input.command;
}

/** Collects up to `cap` bytes; past it, counts and drops. */
class CappedSink {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  truncated = false;

  constructor(readonly cap: number) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.#kept;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(kept);
    this.#kept += kept.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

export async function runShell(
  client: Pick<AdbClient, 'shellStream'>,
  serial: string,
  input: ShellInput,
  run: ShellRun,
): Promise<ShellOutcome> {
  const line = shellLine(input);
  const startedAt = performance.now();
  const end = Date.now() + run.timeoutMs;
  const left = () => ({
    signal: run.signal,
    timeoutMs: Math.max(1, end - Date.now()),
    totalMs: run.timeoutMs,
  });
  const stream = await client.shellStream(serial, line, left());
  const out = new CappedSink(run.maxOutputBytes);
  const err = new CappedSink(run.maxOutputBytes);
  stream.stdout.on('data', (d: Buffer) => out.push(d));
  stream.stderr.on('data', (d: Buffer) => err.push(d));
  const exitCode = await withDeadline(stream.exit, left(), 'shell command', () => stream.close());
  if (exitCode === null) {
    throw new BridgeError('DEVICE_OFFLINE', `shell on ${serial}: the stream closed before the exit status`, {
      details: { serial },
    });
  }
  return {
    exitCode,
    stdout: out.bytes(),
    stderr: err.bytes(),
    truncated: out.truncated || err.truncated,
    durationMs: performance.now() - startedAt,
  };
}
