/**
 * A lease's logcat as NDJSON bytes: `logcat -v epoch` over the shell protocol, split into lines,
 * parsed (logcat.ts), filtered, one JSON object per line. Pull-based end to end: the HTTP response
 * pulls one entry at a time, the shell stream pauses the adb socket while its output is unread, so a
 * slow client holds the device's output back instead of growing the bridge's memory (at most one
 * partial line of `MAX_LINE_BYTES` is buffered). The stream ends when `close()` is called (the lease
 * ended) or the client goes away (cancel).
 */
import type { ShellStream } from '../../adb/shell-stream.ts';
import { TurnBudget } from '../../event-loop-turns.ts';
import { type LogEntry, type LogLevel, logEntryMatches, parseLogcatLine } from './logcat.ts';

export interface LogcatFilter {
  level?: LogLevel;
  tag?: string;
  pid?: number;
  /** ms since the epoch. */
  since?: number;
}

export const LOGCAT_COMMAND = 'logcat -v epoch';
const MAX_LINE_BYTES = 64 * 1024;

async function* lines(shell: ShellStream): AsyncGenerator<string> {
  shell.stdout.setEncoding('utf8');
  let rest = '';
  for await (const chunk of shell.stdout as AsyncIterable<string>) {
    rest += chunk;
    let nl = rest.indexOf('\n');
    while (nl >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
    }
    // A line longer than any log entry is not one: drop it rather than buffer it.
    if (rest.length > MAX_LINE_BYTES) rest = '';
  }
}

export function logcatNdjson(shell: ShellStream, filter: LogcatFilter): ReadableStream<Uint8Array> {
  // logcat's stderr is not part of the stream; read it away so it never holds the socket back.
  shell.stderr.resume();
  const source = lines(shell);
  const encoder = new TextEncoder();
  // A loud device and a reader that takes everything at once would otherwise keep the event loop
  // (pulls chain in microtasks while the socket has data): lines read count, filtered out or not.
  const turns = new TurnBudget();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const next = await source.next();
          if (next.done) {
            controller.close();
            return;
          }
          const entry: LogEntry | null = parseLogcatLine(next.value);
          const spent = turns.spend(next.value.length + 1);
          if (entry !== null && logEntryMatches(entry, filter)) {
            controller.enqueue(encoder.encode(`${JSON.stringify(entry)}\n`));
            await spent;
            return;
          }
          await spent;
        }
      },
      async cancel() {
        shell.close();
        await source.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}
