/** The logcat `-v epoch` parser and filters (outside input: whatever the device prints). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOG_LEVELS, logEntryMatches, parseLogcatLine } from '../../src/helpers/farm/logcat.ts';

describe('parseLogcatLine', () => {
  it('parses the epoch format as logcat prints it (golden lines)', () => {
    expect(parseLogcatLine(' 1518634574.987  1004  1010 I chatty  : uid=1000(system) expire 1 line')).toEqual(
      {
        time: 1518634574987,
        pid: 1004,
        tid: 1010,
        level: 'I',
        tag: 'chatty',
        message: 'uid=1000(system) expire 1 line',
      },
    );
    expect(parseLogcatLine('1700000000.005 12 13 E AndroidRuntime: FATAL EXCEPTION: main')).toMatchObject({
      time: 1700000000005,
      level: 'E',
      tag: 'AndroidRuntime',
      message: 'FATAL EXCEPTION: main',
    });
    expect(parseLogcatLine('--------- beginning of main')).toBeNull();
    expect(parseLogcatLine('')).toBeNull();
  });

  it('property: a formatted entry parses back; any line parses or is null, never throws', () => {
    const entry = fc.record({
      seconds: fc.integer({ min: 0, max: 4_000_000_000 }),
      millis: fc.integer({ min: 0, max: 999 }),
      pid: fc.integer({ min: 0, max: 99999 }),
      tid: fc.integer({ min: 0, max: 99999 }),
      level: fc.constantFrom(...LOG_LEVELS),
      tag: fc.stringMatching(/^[A-Za-z0-9_.$-]{1,23}$/),
      message: fc.string({ maxLength: 80 }).filter((s) => !/[\r\n]/.test(s)),
    });
    fc.assert(
      fc.property(entry, (e) => {
        const line = ` ${e.seconds}.${String(e.millis).padStart(3, '0')} ${String(e.pid).padStart(5)} ${String(e.tid).padStart(5)} ${e.level} ${e.tag.padEnd(8)}: ${e.message}`;
        expect(parseLogcatLine(line)).toEqual({
          time: e.seconds * 1000 + e.millis,
          pid: e.pid,
          tid: e.tid,
          level: e.level,
          tag: e.tag,
          message: e.message,
        });
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        const r = parseLogcatLine(s);
        if (r !== null) expect(LOG_LEVELS).toContain(r.level);
      }),
    );
  });
});

describe('logEntryMatches', () => {
  const e = { time: 1000, pid: 7, tid: 7, level: 'W' as const, tag: 'App', message: 'm' };
  it('filters by minimum level, exact tag, pid and since', () => {
    expect(logEntryMatches(e, {})).toBe(true);
    expect(logEntryMatches(e, { level: 'I' })).toBe(true);
    expect(logEntryMatches(e, { level: 'E' })).toBe(false);
    expect(logEntryMatches(e, { tag: 'App' })).toBe(true);
    expect(logEntryMatches(e, { tag: 'app' })).toBe(false);
    expect(logEntryMatches(e, { pid: 8 })).toBe(false);
    expect(logEntryMatches(e, { since: 1000 })).toBe(true);
    expect(logEntryMatches(e, { since: 1001 })).toBe(false);
  });
});
