/**
 * logcat's `-v epoch` line format, parsed (issue 14, capability 3): ` SECONDS.MILLIS  PID  TID L
 * TAG: message` → `{time, pid, tid, level, tag, message}`. Pure; the I/O layer only splits lines.
 * Lines that are not entries (`--------- beginning of main`) parse to null.
 */

export const LOG_LEVELS = ['V', 'D', 'I', 'W', 'E', 'F'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogEntry {
  /** ms since the epoch. */
  time: number;
  pid: number;
  tid: number;
  level: LogLevel;
  tag: string;
  message: string;
}

const LINE = /^\s*(\d{1,12})\.(\d{3})\s+(\d{1,10})\s+(\d{1,10})\s+([VDIWEF])\s(.*?)\s*: ([\s\S]*)$/;

export function parseLogcatLine(line: string): LogEntry | null {
  const m = LINE.exec(line.endsWith('\r') ? line.slice(0, -1) : line);
  if (m === null) return null;
  return {
    time: Number(m[1]) * 1000 + Number(m[2]),
    pid: Number(m[3]),
    tid: Number(m[4]),
    level: m[5] as LogLevel,
    tag: (m[6] as string).trim(),
    message: m[7] as string,
  };
}

/** Whether `entry` passes the filters: at least `level`, exactly `tag`, at or after `since` (ms). */
export function logEntryMatches(
  entry: LogEntry,
  filter: { level?: LogLevel; tag?: string; pid?: number; since?: number },
): boolean {
  if (filter.level !== undefined && LOG_LEVELS.indexOf(entry.level) < LOG_LEVELS.indexOf(filter.level))
    return false;
  if (filter.tag !== undefined && entry.tag !== filter.tag) return false;
  if (filter.pid !== undefined && entry.pid !== filter.pid) return false;
  if (filter.since !== undefined && entry.time < filter.since) return false;
  return true;
}
