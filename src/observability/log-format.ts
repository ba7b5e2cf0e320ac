/**
 * Human-readable log lines for a terminal: `HH:MM:SS.mmm LEVEL message key=value …` from pino's
 * JSON lines (pure). Which format a process uses: `LOG_FORMAT` (`json`, `pretty`, or `auto`: pretty
 * when the log stream is a terminal, JSON otherwise, e.g. under a container runtime or a pipe).
 */

export type LogFormat = 'auto' | 'json' | 'pretty';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields every line has, shown in the line's head (or dropped: service, pid, hostname). */
const HEAD = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

/** C0, DEL and C1 controls (and the JS line separators): never written raw to a terminal. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** Text as it may reach a terminal: every control character as a `\\uXXXX` escape. */
function inert(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function show(value: unknown): string {
  if (typeof value === 'string')
    return /^[^\s"=\u0000-\u001f\u007f-\u009f\u2028\u2029]+$/.test(value)
      ? value
      : inert(JSON.stringify(value));
  const json = JSON.stringify(value);
  return inert(json === undefined ? String(value) : json);
}

function clock(time: unknown): string {
  const date = typeof time === 'number' ? new Date(time) : null;
  return date && !Number.isNaN(date.getTime()) ? date.toISOString().slice(11, 23) : '--:--:--.---';
}

/** One pino JSON line as a human line; a line that is not a JSON object is returned as it is. */
export function formatLogLine(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return line;
  const e = entry as Record<string, unknown>;
  const level = typeof e['level'] === 'number' ? (LEVELS[e['level']] ?? `L${e['level']}`) : 'INFO ';
  const msg = typeof e['msg'] === 'string' ? inert(e['msg']) : '';
  const rest = Object.entries(e)
    .filter(([key]) => !HEAD.has(key))
    .map(([key, value]) => `${inert(key)}=${show(value)}`);
  return [clock(e['time']), level, msg, ...rest].filter((part) => part !== '').join(' ');
}

/** Pretty or JSON for a stream that is (or is not) a terminal. */
export function resolveLogFormat(format: LogFormat, isTerminal: boolean): 'json' | 'pretty' {
  return format === 'auto' ? (isTerminal ? 'pretty' : 'json') : format;
}
