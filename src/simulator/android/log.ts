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
  /** A ring: `#start` is the oldest entry once it is full (a high synthetic rate costs no shifting). */
  readonly #entries: SimLogEntry[] = [];
  #start = 0;
  readonly #followers = new Set<(entry: SimLogEntry) => void>();
  readonly #capacity: number;

  constructor(capacity = 5000) {
    this.#capacity = capacity;
  }

  write(level: SimLogLevel, tag: string, message: string, pid = SYSTEM_SERVER_PID): void {
    const entry = { time: Date.now(), pid, tid: pid, level, tag, message };
    if (this.#entries.length < this.#capacity) this.#entries.push(entry);
    else {
      this.#entries[this.#start] = entry;
      this.#start = (this.#start + 1) % this.#capacity;
    }
    for (const f of this.#followers) f(entry);
  }

  /** The buffered entries, oldest first. */
  entries(): readonly SimLogEntry[] {
    return this.#start === 0
      ? this.#entries.slice()
      : [...this.#entries.slice(this.#start), ...this.#entries.slice(0, this.#start)];
  }

  /** How many `logcat` readers follow the log now. */
  get followers(): number {
    return this.#followers.size;
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

/** The pid the synthetic load generator logs as. */
export const SYNTHETIC_LOG_PID = 2000;
const SYNTHETIC_LEVELS: readonly SimLogLevel[] = ['V', 'D', 'I', 'W', 'E'];

/**
 * Write `linesPerSecond` synthetic entries (tag `LoadGen`, levels V D I W E in turn) into `log`, in
 * ticks of `tickMs`, until the returned function is called: the device's load for logcat tests and
 * benchmarks (`simulate --log-rate N`). The ring stays bounded; a follower that cannot keep up
 * drops entries at its end (commands/logcat.ts), as logd does for a slow reader.
 */
export function startSyntheticLog(log: SimLogBuffer, linesPerSecond: number, tickMs = 20): () => void {
  if (!Number.isFinite(linesPerSecond) || linesPerSecond <= 0) return () => undefined;
  let owed = 0;
  let n = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    // Catch up after a stalled event loop, but never by more than one second's worth.
    owed = Math.min(owed + ((now - last) / 1000) * linesPerSecond, linesPerSecond);
    last = now;
    for (; owed >= 1; owed--, n++) {
      log.write(
        SYNTHETIC_LEVELS[n % SYNTHETIC_LEVELS.length] as SimLogLevel,
        'LoadGen',
        `synthetic line ${n}`,
        SYNTHETIC_LOG_PID,
      );
    }
  }, tickMs);
  timer.unref();
  return () => clearInterval(timer);
}
