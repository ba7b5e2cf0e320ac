/**
 * A `shell,v2` stream over an open socket: shell-protocol packets in, stdout/stderr Readables and
 * an exit code out, with backpressure. When a reader falls behind (`write()` answers false), the
 * socket is paused until that output drains, so adb and the device wait instead of the bridge
 * buffering the whole output in memory.
 */

import type { Duplex } from 'node:stream';
import { PassThrough, type Readable } from 'node:stream';
import {
  encodeShellPacket,
  SHELL_CLOSE_STDIN,
  SHELL_EXIT,
  SHELL_STDERR,
  SHELL_STDIN,
  SHELL_STDOUT,
  ShellPacketDecoder,
} from '../protocol/adb/shell-protocol.ts';

/** A running shell command whose output is consumed as it arrives (held instrumentation). */
export interface ShellStream {
  stdout: Readable;
  stderr: Readable;
  /** Resolves with the exit code, or null when the stream closed without one. */
  exit: Promise<number | null>;
  close(): void;
}

const STDIN_CHUNK = 64 * 1024;

/** Run the shell protocol on `socket` (already past adb's `OKAY`); `stdin` is sent, then closed. */
export function shellStreamOver(socket: Duplex, stdin?: Uint8Array): ShellStream {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const decoder = new ShellPacketDecoder();
  const waiting = new Set<PassThrough>();
  const deliver = (sink: PassThrough, data: Buffer) => {
    if (sink.writableEnded || sink.write(data)) return;
    // The reader is behind: stop reading the socket until this output drains.
    if (waiting.size === 0) socket.pause();
    if (!waiting.has(sink)) {
      waiting.add(sink);
      sink.once('drain', () => {
        waiting.delete(sink);
        if (waiting.size === 0) socket.resume();
      });
    }
  };
  let exitCode: number | null = null;
  const exit = new Promise<number | null>((resolve) => {
    let finished = false;
    // Resolve once the output is delivered to whoever reads it: at the exit packet, without
    // waiting for the stream's close to travel back through the adb server.
    const done = () => {
      if (finished) return;
      finished = true;
      stdout.end();
      stderr.end();
      const drained = (s: PassThrough) =>
        s.readableFlowing ? new Promise<void>((r) => s.once('end', () => r())) : Promise.resolve();
      void Promise.all([drained(stdout), drained(stderr)]).then(() => resolve(exitCode));
    };
    socket.on('data', (chunk: Buffer) => {
      let packets: ReturnType<ShellPacketDecoder['push']>;
      try {
        packets = decoder.push(chunk);
      } catch {
        // Unexpected bytes: the stream's state is unknown, destroy it.
        socket.destroy();
        return;
      }
      for (const p of packets) {
        if (p.id === SHELL_STDOUT) deliver(stdout, p.data);
        else if (p.id === SHELL_STDERR) deliver(stderr, p.data);
        else if (p.id === SHELL_EXIT) {
          exitCode = p.data[0] ?? 0;
          socket.end();
          done();
        }
      }
    });
    socket.once('close', done);
    socket.once('error', () => socket.destroy());
    socket.resume();
  });
  if (stdin !== undefined) {
    for (let i = 0; i < stdin.length; i += STDIN_CHUNK) {
      socket.write(encodeShellPacket(SHELL_STDIN, stdin.subarray(i, i + STDIN_CHUNK)));
    }
  }
  socket.write(encodeShellPacket(SHELL_CLOSE_STDIN));
  return { stdout, stderr, exit, close: () => socket.destroy() };
}
