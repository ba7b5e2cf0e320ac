/** The logcat `-v epoch` parser and filters (outside input: whatever the device prints). */
import { getDefaultHighWaterMark, PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOG_LEVELS, logEntryMatches, parseLogcatLine } from '../../src/helpers/farm/logcat.ts';
import { logcatNdjson } from '../../src/helpers/farm/logcat-stream.ts';
import { waitFor } from '../support/wait-for.ts';

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

describe('logcatNdjson', () => {
  it("pulls at the reader's pace: a reader that stops leaves the producer blocked, nothing piles up", async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let closed = false;
    let stop = false;
    const shell = {
      stdout,
      stderr,
      exit: new Promise<number | null>(() => undefined),
      close: () => {
        closed = true;
        stop = true;
        stdout.end();
      },
    };
    const stream = logcatNdjson(shell, { level: 'I' });
    const line = (i: number) =>
      ` 1700000000.${String(i % 1000).padStart(3, '0')}   100   101 ${i % 2 ? 'I' : 'D'} Tag     : ${'x'.repeat(1000)} ${i}\n`;
    // A producer that honours backpressure (as the shell stream's socket does): it can only write
    // as far as the bridge reads.
    let written = 0;
    let held = false;
    const producer = (async () => {
      for (let i = 0; i < 10_000 && !stop; i++) {
        written += 1;
        if (!stdout.write(line(i))) {
          held = true;
          await new Promise((r) => {
            stdout.once('drain', r);
            stdout.once('finish', r);
          });
          held = false;
        }
      }
    })();
    const reader = stream.getReader();
    const first = JSON.parse(new TextDecoder().decode((await reader.read()).value));
    expect(first).toMatchObject({ level: 'I', tag: 'Tag', pid: 100, tid: 101 });
    // The pipe lives in memory and moves only in ticks and microtasks: the bridge has taken all it
    // will once a setImmediate turn passes with the producer waiting for 'drain' and nothing written.
    await waitFor(
      async () => {
        const before = written;
        await new Promise((r) => setImmediate(r));
        return written >= 10_000 || (held && written === before);
      },
      { what: 'the producer to be held by the stalled reader' },
    );
    // 10,000 lines of ~1 KB are waiting; the bridge took only what its small buffers hold. The
    // stand-in pipe itself holds two default highWaterMarks (its writable and readable sides: 16 KiB
    // each up to Node 20, 64 KiB from Node 22), ~32 or ~128 lines; measured 48 on Node 20 and 189
    // on Node 24: a few pipes' worth at most.
    const pipeLines = (2 * getDefaultHighWaterMark(false)) / 1024;
    expect(written).toBeLessThan(3 * pipeLines);
    await reader.cancel();
    expect(closed).toBe(true);
    // The producer stays blocked on the closed stream (as the device's writer would): not awaited.
    void producer;
  }, 10_000);
});
