/**
 * One shell command on a leased device: built from an argv array through the one quoting function
 * (or taken as the caller's command line), run over the shell protocol v2 (real stdout, stderr and
 * exit status) under one deadline. Each output has a byte cap: the first byte past it stops the
 * command (the stream is closed, so adbd ends it and nothing more is read from the device), and the
 * answer holds what was kept, `truncated`, and no exit status. A call never holds more than its caps.
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
  /** Count output bytes read; answers how long (ms) to pause reading before more (shell-gate.ts). */
  pace?: (bytes: number) => number;
}

export interface ShellOutcome {
  /** null when the command was stopped at the output cap (`truncated`). */
  exitCode: number | null;
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

/** Collects up to `cap` bytes; past it, drops and calls `full` (once). */
class CappedSink {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  truncated = false;

  constructor(
    readonly cap: number,
    readonly full: () => void,
  ) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.#kept;
    if (chunk.length > room && !this.truncated) {
      this.truncated = true;
      this.full();
    }
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
  let capped: () => void = () => undefined;
  const cappedAt = new Promise<'capped'>((resolve) => {
    capped = () => resolve('capped');
  });
  const out = new CappedSink(run.maxOutputBytes, () => capped());
  const err = new CappedSink(run.maxOutputBytes, () => capped());
  // Paced: past the tenant's output rate both outputs pause (the adb socket with them) for a while.
  let resumeAt: NodeJS.Timeout | undefined;
  const paced = (bytes: number) => {
    const wait = run.pace?.(bytes) ?? 0;
    if (wait <= 0 || resumeAt !== undefined) return;
    stream.stdout.pause();
    stream.stderr.pause();
    resumeAt = setTimeout(() => {
      resumeAt = undefined;
      stream.stdout.resume();
      stream.stderr.resume();
    }, wait);
  };
  stream.stdout.on('data', (d: Buffer) => {
    out.push(d);
    paced(d.length);
  });
  stream.stderr.on('data', (d: Buffer) => {
    err.push(d);
    paced(d.length);
  });
  try {
    const ended = await withDeadline(Promise.race([stream.exit, cappedAt]), left(), 'shell command', () =>
      stream.close(),
    );
    if (ended === 'capped') {
      stream.close();
      return {
        exitCode: null,
        stdout: out.bytes(),
        stderr: err.bytes(),
        truncated: true,
        durationMs: performance.now() - startedAt,
      };
    }
    const exitCode = ended;
    if (exitCode === null) {
      throw new BridgeError(
        'DEVICE_OFFLINE',
        `shell on ${serial}: the stream closed before the exit status`,
        {
          details: { serial },
        },
      );
    }
    return {
      exitCode,
      stdout: out.bytes(),
      stderr: err.bytes(),
      truncated: out.truncated || err.truncated,
      durationMs: performance.now() - startedAt,
    };
  } finally {
    clearTimeout(resumeAt);
  }
}
