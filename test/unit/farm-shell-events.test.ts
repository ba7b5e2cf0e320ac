/**
 * The streamed shell command's pure parts: the NDJSON event stream over a ShellStream (our own
 * interface, fed here by hand: order, terminal events, deadline, lease end, cancel, backpressure)
 * and the client's event parser (property-tested against the API schema).
 */
import { getDefaultHighWaterMark, PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { ShellStream } from '../../src/adb/shell-stream.ts';
import { ShellEventSchema } from '../../src/api/farm.ts';
import { parseShellEventLine } from '../../src/client/shell-events.ts';
import { BridgeError } from '../../src/errors.ts';
import {
  encodeShellEvent,
  QUEUE_HIGH_BYTES,
  type ShellEvent,
  shellEventStream,
} from '../../src/helpers/farm/shell-events.ts';
import { ShellGate } from '../../src/helpers/farm/shell-gate.ts';
import { SimLogBuffer, startSyntheticLog } from '../../src/simulator/android/log.ts';
import { waitFor } from '../support/wait-for.ts';

function fakeShell() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let closed = 0;
  let exit!: (code: number | null) => void;
  const shell: ShellStream = {
    stdout,
    stderr,
    exit: new Promise((r) => {
      exit = r;
    }),
    close: () => {
      closed++;
      stdout.end();
      stderr.end();
      exit(null);
    },
  };
  return {
    shell,
    stdout,
    stderr,
    finish: (code: number) => {
      stdout.end();
      stderr.end();
      exit(code);
    },
    closed: () => closed,
  };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<ShellEvent[]> {
  const chunks: Buffer[] = [];
  for await (const c of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(c));
  const text = Buffer.concat(chunks).toString('utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ShellEvent);
}

const bytesOf = (events: ShellEvent[], stream: 'stdout' | 'stderr') =>
  Buffer.concat(
    events.flatMap((e) => ('stream' in e && e.stream === stream ? [Buffer.from(e.data, 'base64')] : [])),
  );

describe('shellEventStream', () => {
  it('streams stdout and stderr byte-exact, in order, then the exit status last', async () => {
    const f = fakeShell();
    const stream = shellEventStream(f.shell, { timeoutMs: 10_000, signal: new AbortController().signal });
    const binary = Buffer.from([0, 255, 10, 13, 0xc3]);
    f.stdout.write('out1 ');
    f.stderr.write('err');
    f.stdout.write(binary);
    f.finish(3);
    const events = await readAll(stream);
    expect(bytesOf(events, 'stdout')).toEqual(Buffer.concat([Buffer.from('out1 '), binary]));
    expect(bytesOf(events, 'stderr').toString()).toBe('err');
    const last = events.at(-1) as { exit: number };
    expect(last.exit).toBe(3);
    expect(events.filter((e) => 'exit' in e)).toHaveLength(1);
    expect(f.closed()).toBe(0);
    for (const e of events) expect(ShellEventSchema.safeParse(e).success).toBe(true);
  });

  it('past the deadline: closes the command and ends with a TIMEOUT event naming it', async () => {
    const f = fakeShell();
    const stream = shellEventStream(f.shell, { timeoutMs: 50, signal: new AbortController().signal });
    f.stdout.write('partial');
    const events = await readAll(stream);
    expect(bytesOf(events, 'stdout').toString()).toBe('partial');
    expect(events.at(-1)).toMatchObject({ error: { code: 'TIMEOUT' } });
    expect((events.at(-1) as { error: { message: string } }).error.message).toContain('50 ms');
    expect(f.closed()).toBe(1);
  });

  it('the lease ending closes the command and ends with LEASE_EXPIRED', async () => {
    const f = fakeShell();
    const lease = new AbortController();
    const stream = shellEventStream(f.shell, { timeoutMs: 10_000, signal: lease.signal });
    setTimeout(() => lease.abort(new BridgeError('LEASE_EXPIRED', 'lease x has ended')), 20);
    const events = await readAll(stream);
    expect(events.at(-1)).toEqual({ error: { code: 'LEASE_EXPIRED', message: 'lease x has ended' } });
    expect(f.closed()).toBe(1);
  });

  it('a stream that closes without an exit status ends with DEVICE_OFFLINE', async () => {
    const f = fakeShell();
    const stream = shellEventStream(f.shell, { timeoutMs: 10_000, signal: new AbortController().signal });
    f.shell.close();
    const events = await readAll(stream);
    expect(events.at(-1)).toMatchObject({ error: { code: 'DEVICE_OFFLINE' } });
  });

  it('a reader that cancels (the client went away) closes the command on the device', async () => {
    const f = fakeShell();
    let ended = 0;
    const stream = shellEventStream(f.shell, {
      timeoutMs: 10_000,
      signal: new AbortController().signal,
      onEnd: () => ended++,
    });
    const reader = stream.getReader();
    f.stdout.write('x');
    await reader.read();
    await reader.cancel();
    expect(f.closed()).toBe(1);
    expect(ended).toBe(1);
  });

  it('backpressure: a reader that stalls stops the output (the producer is held), then gets every byte', async () => {
    const f = fakeShell();
    const stream = shellEventStream(f.shell, { timeoutMs: 20_000, signal: new AbortController().signal });
    const chunk = Buffer.alloc(4096, 0x61);
    let accepted = 0;
    let producing = true;
    let held = false;
    const total = 8 * 1024 * 1024;
    const producer = (async () => {
      while (producing && accepted < total) {
        accepted += chunk.length;
        if (!f.stdout.write(chunk)) {
          held = true;
          await new Promise((r) => f.stdout.once('drain', r));
          held = false;
        }
      }
    })();
    const reader = stream.getReader();
    await reader.read(); // one event, then the reader stalls
    // These streams live in memory and move only in ticks and microtasks: the output has stopped
    // once a setImmediate turn passes with the producer waiting for 'drain' and nothing accepted.
    // (Without backpressure the producer writes all 8 MiB: the bound below fails.)
    await waitFor(
      async () => {
        const before = accepted;
        await new Promise((r) => setImmediate(r));
        return accepted >= total || (held && accepted === before);
      },
      { what: 'the producer to be held by the stalled reader' },
    );
    // Held: at most the event queue's bound (base64 grows 4/3) and the pipe's own buffer got in: its
    // writable and readable sides, a default highWaterMark each (16 KiB up to Node 20, 64 KiB from
    // Node 22; measured 76 KiB in all on Node 20, 172 KiB on Node 24).
    const pipeBytes = 2 * getDefaultHighWaterMark(false);
    expect(accepted).toBeLessThan(QUEUE_HIGH_BYTES + pipeBytes + 32 * 1024);
    producing = false;
    f.stdout.write('end');
    // Reading on drains what was accepted; the producer's last pending write resolves.
    setTimeout(() => f.finish(0), 50);
    let received = 0;
    let last: ShellEvent | undefined;
    const decoder = new TextDecoder();
    let rest = '';
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      rest += decoder.decode(next.value, { stream: true });
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) {
        last = JSON.parse(l) as ShellEvent;
        if ('stream' in last) received += Buffer.from(last.data, 'base64').length;
      }
    }
    await producer;
    expect(last).toMatchObject({ exit: 0 });
    // The first event (read above) plus everything after it.
    expect(received + chunk.length).toBeGreaterThanOrEqual(accepted);
  });
});

describe('shellEventStream paced by the shell gate', () => {
  /** A reader that takes what the stream has produced so far, without waiting for more. */
  function eventsOf(stream: ReadableStream<Uint8Array>) {
    const reader = stream.getReader();
    const events: ShellEvent[] = [];
    let pending: ReturnType<typeof reader.read> | undefined;
    return {
      events,
      async readAvailable() {
        for (;;) {
          pending ??= reader.read();
          const next = await Promise.race([
            pending,
            new Promise<'idle'>((r) => setImmediate(() => setImmediate(() => r('idle')))),
          ]);
          if (next === 'idle') return;
          pending = undefined;
          if (next.done) return;
          for (const line of Buffer.from(next.value).toString('utf8').split('\n'))
            if (line !== '') events.push(JSON.parse(line) as ShellEvent);
        }
      },
    };
  }

  it("a tenant's stream is held to its pace; another tenant's stream is not slowed", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      // 1000 bytes a second per tenant (a burst of one second's worth first), on a fake clock.
      const gate = new ShellGate({
        perLease: 4,
        perTenant: 16,
        outputBudgetBytes: 1 << 20,
        outputBytesPerSecond: 1000,
      });
      let now = 0;
      const open = (tenant: string) => {
        const f = fakeShell();
        const stream = shellEventStream(f.shell, {
          timeoutMs: 60_000,
          signal: new AbortController().signal,
          pace: (bytes) => gate.pace(tenant, bytes, now),
        });
        return { f, ...eventsOf(stream) };
      };
      const loud = open('loud');
      const chunk = Buffer.alloc(250, 'x');
      for (let i = 0; i < 40; i++) loud.f.stdout.write(chunk); // 10,000 bytes waiting on the device side
      await loud.readAvailable();
      // The burst (1000 bytes) and what was already on its way (a chunk or two), no more: the
      // device's output is paused.
      const first = bytesOf(loud.events, 'stdout').length;
      expect(first).toBeGreaterThanOrEqual(1000);
      expect(first).toBeLessThanOrEqual(1500);
      expect(loud.f.stdout.isPaused()).toBe(true);

      // Another tenant meanwhile gets its own burst at once.
      const quiet = open('quiet');
      for (let i = 0; i < 4; i++) quiet.f.stdout.write(chunk);
      await quiet.readAvailable();
      expect(bytesOf(quiet.events, 'stdout').length).toBe(1000);

      // One second later (fake clock and timers), the loud tenant gets one more second's worth.
      now += 1000;
      await vi.advanceTimersByTimeAsync(1000);
      await loud.readAvailable();
      const second = bytesOf(loud.events, 'stdout').length;
      expect(second - first).toBeGreaterThanOrEqual(500);
      expect(second - first).toBeLessThanOrEqual(1500);
      // Nothing was dropped: after enough time every byte arrives, in order.
      for (let t = 0; t < 20; t++) {
        now += 1000;
        await vi.advanceTimersByTimeAsync(1000);
        await loud.readAvailable();
      }
      expect(bytesOf(loud.events, 'stdout')).toEqual(Buffer.alloc(10_000, 'x'));
      loud.f.finish(0);
      quiet.f.finish(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('parseShellEventLine', () => {
  const event = fc.oneof(
    fc.record({
      stream: fc.constantFrom('stdout' as const, 'stderr' as const),
      data: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
    }),
    fc.record({ exit: fc.integer({ min: 0, max: 255 }), durationMs: fc.nat() }),
    fc.record({ error: fc.record({ code: fc.string({ minLength: 1 }), message: fc.string() }) }),
  );

  it('property: every event the bridge encodes parses back to the same event', () => {
    fc.assert(
      fc.property(event, (e) => {
        const line = Buffer.from(encodeShellEvent(e)).toString('utf8').trimEnd();
        const parsed = parseShellEventLine(line);
        expect(parsed).not.toBeNull();
        if ('stream' in e) {
          expect(parsed).toMatchObject({ stream: e.stream });
          expect(Buffer.from((parsed as { data: Uint8Array }).data).toString('base64')).toBe(e.data);
        } else expect(parsed).toEqual(e);
        expect(ShellEventSchema.safeParse(e).success).toBe(true);
      }),
    );
  });

  it('property: whatever it accepts, the API schema accepts too; garbage is null, never a throw', () => {
    const json = fc.oneof(
      fc.json(),
      event.map((e) => JSON.stringify(e)),
      fc
        .tuple(event, fc.string({ maxLength: 4 }), fc.anything())
        .map(([e, k, v]) => JSON.stringify({ ...e, [k]: v })),
    );
    fc.assert(
      fc.property(json, (line) => {
        const parsed = parseShellEventLine(line);
        if (parsed === null) return;
        expect(ShellEventSchema.safeParse(JSON.parse(line)).success).toBe(true);
      }),
    );
    for (const bad of [
      '',
      'x',
      '[]',
      '{"stream":"stdin","data":""}',
      '{"exit":256,"durationMs":1}',
      '{"data":"!"}',
    ])
      expect(parseShellEventLine(bad), bad).toBeNull();
  });
});

describe('one shell-event rule for the client and the API schema', () => {
  /** Does the API schema take the line? (A line that is not JSON: no.) */
  const schemaTakes = (line: string): boolean => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return false;
    }
    return ShellEventSchema.safeParse(value).success;
  };
  const base64ish = fc.string({ unit: fc.constantFrom(...'AQZaz09+/=-_ '.split('')), maxLength: 12 });

  it('property: the client parser and the API schema agree on every line (data of every length and padding)', () => {
    const line = fc.oneof(
      fc
        .record({ stream: fc.constantFrom('stdout', 'stderr', 'stdin'), data: base64ish })
        .map((e) => JSON.stringify(e)),
      fc
        .uint8Array({ maxLength: 20 })
        .map((b) => JSON.stringify({ stream: 'stdout', data: Buffer.from(b).toString('base64') })),
      fc
        .record({ exit: fc.integer({ min: -2, max: 258 }), durationMs: fc.double() })
        .map((e) => JSON.stringify(e)),
      fc.json(),
    );
    fc.assert(
      fc.property(line, (l) => {
        expect(parseShellEventLine(l) !== null, l).toBe(schemaTakes(l));
      }),
      { numRuns: 2_000 },
    );
  });

  it('unpadded or mis-padded data is refused by both; padded base64 is taken by both', () => {
    for (const data of ['QQ', 'QUI', 'Q', 'QQ=', 'QUJD=', '====', 'QQ==QQ==', 'Q===']) {
      const l = JSON.stringify({ stream: 'stdout', data });
      expect(parseShellEventLine(l), data).toBeNull();
      expect(schemaTakes(l), data).toBe(false);
    }
    for (const data of ['', 'QQ==', 'QUI=', 'QUJD', 'QUJDRA==']) {
      const l = JSON.stringify({ stream: 'stderr', data });
      expect(parseShellEventLine(l), data).not.toBeNull();
      expect(schemaTakes(l), data).toBe(true);
    }
  });
});

describe('startSyntheticLog', () => {
  it('writes N lines per second into a bounded ring, tag LoadGen, levels in turn; nothing after stop', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    try {
      const log = new SimLogBuffer(1000);
      const stop = startSyntheticLog(log, 4000, 10);
      vi.advanceTimersByTime(600);
      stop();
      const entries = log.entries();
      expect(entries.length).toBe(1000); // 4000/s for 0.6 s overflows the ring: only the newest stay
      expect(entries.every((e) => e.tag === 'LoadGen')).toBe(true);
      const numbers = entries.map((e) => Number(e.message.split(' ').at(-1)));
      expect(numbers).toEqual(numbers.map((_, i) => (numbers[0] as number) + i)); // oldest first, no gaps
      expect(numbers.at(-1)).toBe(4000 * 0.6 - 1);
      expect(new Set(entries.map((e) => e.level))).toEqual(new Set(['V', 'D', 'I', 'W', 'E']));
      vi.advanceTimersByTime(1000);
      expect(log.entries().at(-1)).toEqual(entries.at(-1));
    } finally {
      vi.useRealTimers();
    }
  });
});
