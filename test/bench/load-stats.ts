/**
 * The load benchmark's own arithmetic (pure, unit-tested in test/unit/bench-load-stats.test.ts):
 * percentiles of latency samples and the fields of a `/proc/<pid>/stat` line it reads CPU time and
 * resident memory from.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The p-th percentile (nearest rank: the smallest sample with at least p % of samples at or below it). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile ${p} is outside 0..100`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  /** User + system CPU time, in clock ticks. */
  ticks: number;
  /** System (kernel) CPU time alone, in clock ticks. */
  systemTicks: number;
  /** Resident set, in pages. */
  rssPages: number;
}

/**
 * Parse one `/proc/<pid>/stat` line (proc(5)). The command name sits in parentheses and may itself
 * hold spaces and parentheses, so the fields after it are counted from the LAST `)`.
 */
export function parseProcStat(line: string): ProcStat {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 1 || close < open) throw new Error(`not a /proc/<pid>/stat line: ${line.slice(0, 80)}`);
  const pid = Number(line.slice(0, open).trim());
  const rest = line
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state): field n is rest[n - 3].
  const field = (n: number): number => {
    const raw = rest[n - 3];
    if (raw === undefined || !/^-?\d+$/.test(raw)) {
      throw new Error(`/proc/<pid>/stat field ${n} is missing or not an integer: ${raw}`);
    }
    return Number(raw);
  };
  if (!Number.isInteger(pid) || pid <= 0)
    throw new Error(`bad pid in /proc/<pid>/stat: ${line.slice(0, 20)}`);
  return {
    pid,
    comm: line.slice(open + 1, close),
    ppid: field(4),
    ticks: field(14) + field(15),
    systemTicks: field(15),
    rssPages: field(24),
  };
}

/** The stat of a live process (throws when it is gone). */
export function procStat(pid: number): ProcStat {
  return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** Pids whose parent is `ppid` and whose command name is `comm` (e.g. the adb server a bridge spawned). */
export function childrenNamed(ppid: number, comm: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const s = procStat(Number(entry));
      if (s.ppid === ppid && s.comm === comm) found.push(s.pid);
    } catch {
      // gone between the listing and the read
    }
  }
  return found;
}

/** CPU use between two stats of one process, as a percentage of one core over `wallMs`. */
export function cpuPercent(before: ProcStat, after: ProcStat, wallMs: number, ticksPerSecond = 100): number {
  if (wallMs <= 0) throw new RangeError('wallMs must be positive');
  return (((after.ticks - before.ticks) * 1000) / ticksPerSecond / wallMs) * 100;
}

/** CPU milliseconds between two stats of one process. */
export function cpuMs(before: ProcStat, after: ProcStat, ticksPerSecond = 100): number {
  return ((after.ticks - before.ticks) * 1000) / ticksPerSecond;
}
