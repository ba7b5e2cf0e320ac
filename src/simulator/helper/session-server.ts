/**
 * The snapshot helper's persistent session (`-e sessionPort P`): a listener on `tcp:P` inside the
 * device. Each connection carries one command line (`snapshot|viewport|gesture|quit <requestId>
 * [payloadBase64]`) and gets one response: `key=value` header lines, a blank line, then the body
 * (the XML for snapshots, nothing otherwise); then the helper closes the connection. The
 * instrumentation stays alive until `quit`, a force-stop, or (with `-w`) the host closing `am`.
 */
import type { Duplex } from 'node:stream';
import type { DeviceListener, SimDevice } from '../types.ts';
import { type Bundle, formatResult, formatSessionHeaders, formatStatus } from './am-output.ts';
import {
  capture,
  errorBundle,
  HelperFailure,
  type HelperOptions,
  injectGesture,
  metadataBundle,
  protocolBundle,
  RESULT_CODE_ERROR,
  RESULT_CODE_OK,
  STATUS_CODE_SESSION_READY,
  viewportFields,
} from './helper-core.ts';
import type { InstrumentationRun } from './instrumentation-run.ts';

/** Longest command line the emulated helper accepts (a gesture payload of a long, dense plan). */
const MAX_COMMAND_BYTES = 16 * 1024 * 1024;

/** Java BufferedReader.readLine(): text up to `\n`, `\r` or end of stream; null on an empty stream. */
export function readCommandLine(socket: Duplex): Promise<string | null> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    const done = (line: string | null): void => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onEnd);
      socket.off('close', onEnd);
      resolve(line);
    };
    const onData = (data: Buffer | string): void => {
      const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      let eol = buf.indexOf(0x0a);
      const cr = buf.indexOf(0x0d);
      if (cr >= 0 && (eol < 0 || cr < eol)) eol = cr;
      if (eol >= 0) {
        parts.push(buf.subarray(0, eol));
        done(Buffer.concat(parts).toString('utf8'));
        return;
      }
      parts.push(buf);
      size += buf.length;
      if (size > MAX_COMMAND_BYTES) done(Buffer.concat(parts).toString('utf8'));
    };
    const onEnd = (): void => {
      done(size === 0 ? null : Buffer.concat(parts).toString('utf8'));
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', onEnd);
    socket.once('close', onEnd);
  });
}

function respond(socket: Duplex, headers: string, body?: Buffer): void {
  const head = Buffer.from(headers, 'utf8');
  socket.end(body === undefined || body.length === 0 ? head : Buffer.concat([head, body]));
}

export async function runSession(
  run: InstrumentationRun,
  device: SimDevice,
  options: HelperOptions,
  port: number,
): Promise<void> {
  const random = (): number => device.random();
  const metadata = metadataBundle(options);
  const failWith = (error: HelperFailure): void => {
    run.finish(formatResult([...metadata, ...errorBundle(error)], RESULT_CODE_ERROR, random));
  };
  if (port > 65535) {
    failWith(new HelperFailure('java.lang.IllegalArgumentException', `Port value out of range: ${port}`));
    return;
  }

  let quit: () => void = () => {};
  const quitRequested = new Promise<'quit'>((resolve) => {
    quit = () => resolve('quit');
  });
  const sessionBundle = (requestId: string): Bundle => [...protocolBundle(), ['requestId', requestId]];

  const handle = async (socket: Duplex): Promise<void> => {
    socket.on('error', () => {});
    const line = await readCommandLine(socket);
    if (run.finished) {
      socket.destroy();
      return;
    }
    if (line === null) {
      respond(
        socket,
        formatSessionHeaders(
          [...sessionBundle(''), ...errorBundle(new HelperFailure('java.io.EOFException', 'empty command'))],
          random,
        ),
      );
      return;
    }
    const [action = '', requestId = '', payload = ''] = splitCommand(line);
    if (device.faults.helperTimeout === true && action !== 'quit') {
      // A hung helper: the command is read and never answered while the process lives.
      await run.stopped;
      socket.destroy();
      return;
    }
    try {
      if (action === 'quit') {
        respond(socket, formatSessionHeaders([...sessionBundle(requestId), ['ok', 'true']], random));
        quit();
        return;
      }
      if (action === 'viewport') {
        respond(
          socket,
          formatSessionHeaders([...sessionBundle(requestId), ...viewportFields(device)], random),
        );
        return;
      }
      if (action === 'gesture') {
        const fields = await injectGesture(device, payload);
        respond(socket, formatSessionHeaders([...sessionBundle(requestId), ...fields], random));
        return;
      }
      if (action !== 'snapshot') {
        throw new HelperFailure('java.lang.IllegalArgumentException', 'unknown session command');
      }
      const captured = await capture(device, options);
      const headers = formatSessionHeaders(
        [
          ...metadata,
          ['requestId', requestId],
          ['ok', 'true'],
          ...captured.fields,
          ['byteLength', String(captured.bytes.length)],
        ],
        random,
      );
      respond(socket, headers, captured.bytes);
    } catch (err) {
      respond(socket, formatSessionHeaders([...sessionBundle(requestId), ...errorBundle(err)], random));
    }
  };

  let listener: DeviceListener;
  try {
    listener = device.listen({ tcp: port }, (socket) => {
      void handle(socket);
    });
  } catch {
    failWith(new HelperFailure('java.net.BindException', 'bind failed: EADDRINUSE (Address already in use)'));
    return;
  }
  try {
    run.write(
      formatStatus(
        [...metadata, ['sessionReady', 'true'], ['sessionPort', String(port)]],
        STATUS_CODE_SESSION_READY,
        random,
      ),
    );
    const ended = await Promise.race([quitRequested, run.stopped]);
    if (ended === 'quit') {
      run.finish(
        formatResult([...metadata, ['ok', 'true'], ['sessionEnded', 'true']], RESULT_CODE_OK, random),
      );
    }
  } finally {
    listener.close();
  }
}

/** Java's `trim()`: every character up to U+0020 at either end (JavaScript's trims other ones). */
const JAVA_TRIM = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;
/** Java's regex `\s`: space, tab, LF, VT, FF, CR (JavaScript's `\s` is Unicode's whitespace). */
const JAVA_SPACE = /[ \t\n\u000b\f\r]+/;

/**
 * Java `command.trim().split("\\s+", 3)` (SessionCommand.java), character for character:
 * test/fixtures/contract/snapshot-helper/session-commands.json holds lines both split.
 */
export function splitCommand(line: string): string[] {
  const trimmed = line.replace(JAVA_TRIM, '');
  if (trimmed === '') return [''];
  const out: string[] = [];
  let rest = trimmed;
  while (out.length < 2) {
    const m = JAVA_SPACE.exec(rest);
    if (m === null) break;
    out.push(rest.slice(0, m.index));
    rest = rest.slice(m.index + m[0].length);
  }
  out.push(rest);
  return out;
}
