/** The load benchmark's own arithmetic: nearest-rank percentiles and `/proc/<pid>/stat` parsing. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cpuMs, cpuPercent, parseProcStat, percentile, procStat } from '../bench/load-stats.ts';

describe('percentile', () => {
  it('is the nearest rank', () => {
    const xs = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
    expect(percentile(xs, 50)).toBe(5);
    expect(percentile(xs, 95)).toBe(10);
    expect(percentile(xs, 10)).toBe(1);
    expect(percentile(xs, 0)).toBe(1);
    expect(percentile(xs, 100)).toBe(10);
    expect(percentile([42], 99)).toBe(42);
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile(xs, 101)).toThrow(RangeError);
  });

  it('property: a sample, at least p % at or below it, fewer than p % strictly below', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 200 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (xs, p) => {
          const v = percentile(xs, p);
          expect(xs).toContain(v);
          expect(xs.filter((x) => x <= v).length).toBeGreaterThanOrEqual((p / 100) * xs.length - 1e-9);
          expect(xs.filter((x) => x < v).length).toBeLessThan(Math.max(1, (p / 100) * xs.length));
        },
      ),
    );
  });
});

describe('parseProcStat', () => {
  const line = (comm: string, utime: number, stime: number, rss: number, ppid = 7) =>
    `1234 (${comm}) S ${ppid} 1234 1234 0 -1 4194304 100 0 0 0 ${utime} ${stime} 0 0 20 0 1 0 29874 3133440 ${rss} 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0`;

  it('reads pid, comm, ppid, utime + stime and rss', () => {
    expect(parseProcStat(line('node', 250, 50, 417))).toEqual({
      pid: 1234,
      comm: 'node',
      ppid: 7,
      ticks: 300,
      systemTicks: 50,
      rssPages: 417,
    });
  });

  it('counts fields from the last parenthesis (names with spaces and parentheses)', () => {
    expect(parseProcStat(line('a) b (c', 1, 2, 3)).comm).toBe('a) b (c');
    expect(parseProcStat(line('a) b (c', 1, 2, 3)).ticks).toBe(3);
  });

  it('refuses lines that are not a stat line', () => {
    expect(() => parseProcStat('')).toThrow(/not a \/proc/);
    expect(() => parseProcStat('12 (x) S 1 2')).toThrow(/field 14/);
    expect(() => parseProcStat('x (node) S 1')).toThrow();
  });

  it('property: any name and counters round-trip', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 15 }).filter((s) => !s.includes('\n')),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        (comm, u, s, rss, ppid) => {
          const parsed = parseProcStat(line(comm, u, s, rss, ppid));
          expect(parsed).toMatchObject({ comm, ticks: u + s, systemTicks: s, rssPages: rss, ppid });
        },
      ),
    );
  });

  it('reads this process and turns ticks into CPU ms and percent', () => {
    const me = procStat(process.pid);
    expect(me.pid).toBe(process.pid);
    expect(me.rssPages).toBeGreaterThan(0);
    const later = { ...me, ticks: me.ticks + 50 };
    expect(cpuMs(me, later)).toBe(500);
    expect(cpuPercent(me, later, 1000)).toBe(50);
  });
});
