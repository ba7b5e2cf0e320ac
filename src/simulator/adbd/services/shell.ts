/**
 * Process services: `shell:` (v1, raw bytes, stdout and stderr merged, no exit status),
 * `shell,v2,...:` and `abb:` (shell protocol packets with a real exit status), `exec:` and
 * `abb_exec:` (raw, like v1). The command runs inside the emulated Android; this module only moves
 * bytes between the stream and the process.
 */

import {
  encodeShellExit,
  encodeShellHeader,
  SHELL_CLOSE_STDIN,
  SHELL_HEADER_SIZE,
  SHELL_STDERR,
  SHELL_STDIN,
  SHELL_STDOUT,
  ShellPacketDecoder,
} from '../../../protocol/adb/shell-protocol.ts';
import type { ShellIO, SimAndroid } from '../../types.ts';
import { ByteQueue } from '../byte-queue.ts';
import type { AdbStream } from '../stream.ts';

export type ProcessProtocol = 'raw' | 'shell-v2';

/** What to run: a command line through the shell, or an argv without shell parsing. */
export type ProcessSpec = { commandLine: string } | { argv: string[] };

function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}

/** Run `spec` on `android`, wired to `stream` with the given framing. */
export function startProcess(
  android: SimAndroid,
  stream: AdbStream,
  spec: ProcessSpec,
  protocol: ProcessProtocol,
  maxData: number,
): void {
  const stdin = new ByteQueue();
  stream.onClose(() => stdin.end());

  if (protocol === 'raw') {
    stream.setReceiver((data) => stdin.push(data));
  } else {
    const decoder = new ShellPacketDecoder();
    stream.setReceiver((data) => {
      let wait: Promise<void> | undefined;
      for (const packet of decoder.push(data)) {
        if (packet.id === SHELL_STDIN) wait = stdin.push(packet.data);
        else if (packet.id === SHELL_CLOSE_STDIN) stdin.end();
        // SHELL_WINDOW_SIZE and unknown ids: nothing to do without a pty.
      }
      return wait;
    });
  }

  const writeRaw = (data: string | Uint8Array): void => {
    if (!stream.closed) stream.write(toBytes(data));
  };
  const packetWriter =
    (id: number) =>
    (data: string | Uint8Array): void => {
      if (stream.closed) return;
      const bytes = toBytes(data);
      const max = Math.max(1, maxData - SHELL_HEADER_SIZE);
      for (let offset = 0; offset < bytes.length; offset += max) {
        const part = bytes.subarray(offset, offset + max);
        stream.write(encodeShellHeader(id, part.length));
        stream.write(part);
      }
    };

  const io: ShellIO =
    protocol === 'raw'
      ? { stdout: writeRaw, stderr: writeRaw, signal: stream.signal, backlog: () => stream.queuedBytes }
      : {
          stdout: packetWriter(SHELL_STDOUT),
          stderr: packetWriter(SHELL_STDERR),
          signal: stream.signal,
          backlog: () => stream.queuedBytes,
        };

  const run = async (): Promise<number> => {
    if ('argv' in spec) return android.runArgv(spec.argv, io, stdin);
    return android.run(spec.commandLine, io, stdin);
  };

  run()
    .catch((err: unknown) => {
      io.stderr(`${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    })
    .then((code) => {
      if (stream.closed) return;
      if (protocol === 'shell-v2') stream.write(encodeShellExit(code));
      stream.close();
    });
}

/** End a process stream at once with `message` on stderr and exit status 1. */
export function refuseProcess(stream: AdbStream, message: string, protocol: ProcessProtocol): void {
  const bytes = Buffer.from(message, 'utf8');
  if (protocol === 'raw') {
    stream.write(bytes);
  } else {
    stream.write(encodeShellHeader(SHELL_STDERR, bytes.length));
    stream.write(bytes);
    stream.write(encodeShellExit(1));
  }
  stream.close();
}

/** Parse the part of `shell,ARG,ARG:` between `shell` and `:` (`v2`, `raw`, `pty`, `TERM=...`). */
export function parseShellArgs(args: string): { v2: boolean; pty: boolean; term: string | undefined } {
  const parts = args.split(',').filter((a) => a.length > 0);
  const term = parts.find((p) => p.startsWith('TERM='))?.slice('TERM='.length);
  return { v2: parts.includes('v2'), pty: parts.includes('pty'), term };
}
