/**
 * The emulated device's log buffer (what `logcat` reads): a bounded ring of entries that the
 * emulated system writes for what happens on it (installs, uninstalls, launches, instrumentations)
 * and followers that `logcat` without `-d` attaches. Lines are printed in logcat's `-v epoch`
 * format, written here from logcat's documentation (the bridge's parser is separate code).
 */
export type SimLogLevel = 'V' | 'D' | 'I' | 'W' | 'E' | 'F';

export interface SimLogEntry {
  time: number;
  pid: number;
  tid: number;
  level: SimLogLevel;
  tag: string;
  message: string;
}

/** System services log as system_server. */
export const SYSTEM_SERVER_PID = 1041;

export class SimLogBuffer {
  readonly #entries: SimLogEntry[] = [];
  readonly #followers = new Set<(entry: SimLogEntry) => void>();
  readonly #capacity: number;

  constructor(capacity = 5000) {
    this.#capacity = capacity;
  }

  write(level: SimLogLevel, tag: string, message: string, pid = SYSTEM_SERVER_PID): void {
    const entry = { time: Date.now(), pid, tid: pid, level, tag, message };
    this.#entries.push(entry);
    if (this.#entries.length > this.#capacity) this.#entries.shift();
    for (const f of this.#followers) f(entry);
  }

  entries(): readonly SimLogEntry[] {
    return this.#entries;
  }

  /** Call `fn` for every later entry until the returned function is called. */
  follow(fn: (entry: SimLogEntry) => void): () => void {
    this.#followers.add(fn);
    return () => this.#followers.delete(fn);
  }
}

/** One entry as `logcat -v epoch` prints it (one line per message line). */
export function formatEpochLine(e: SimLogEntry): string {
  const head = `${Math.floor(e.time / 1000)}.${String(e.time % 1000).padStart(3, '0')} ${String(e.pid).padStart(5)} ${String(e.tid).padStart(5)} ${e.level} ${e.tag.padEnd(8)}: `;
  return e.message
    .split('\n')
    .map((line) => `${head}${line}\n`)
    .join('');
}
