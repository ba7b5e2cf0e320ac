/** Run a command line on an emulated device and collect its output (tests, CLI diagnostics). */
import type { ShellIO, SimAndroid } from '../types.ts';
import { concatBytes } from './shell/stdin.ts';

export interface CapturedRun {
  status: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Uint8Array;
}

const encoder = new TextEncoder();

export async function runCaptured(
  android: SimAndroid,
  command: string | string[],
  stdin: Array<string | Uint8Array> = [],
  signal: AbortSignal = new AbortController().signal,
): Promise<CapturedRun> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const io: ShellIO = {
    stdout: (d) => out.push(typeof d === 'string' ? encoder.encode(d) : new Uint8Array(d)),
    stderr: (d) => err.push(typeof d === 'string' ? encoder.encode(d) : new Uint8Array(d)),
    signal,
  };
  async function* input(): AsyncGenerator<Uint8Array> {
    for (const chunk of stdin) yield typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
  }
  const status =
    typeof command === 'string'
      ? await android.run(command, io, input())
      : await android.runArgv(command, io, input());
  const stdoutBytes = concatBytes(out);
  const decoder = new TextDecoder();
  return {
    status,
    stdout: decoder.decode(stdoutBytes),
    stderr: decoder.decode(concatBytes(err)),
    stdoutBytes,
  };
}
