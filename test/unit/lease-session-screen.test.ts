/**
 * The live screen's fan-out (src/lease-session/screen.ts) with sinks of our own: a viewer over its
 * queue bound skips to the next key frame and is told how many frames it lost, a stalled viewer
 * never holds another back, every key frame carries the SPS/PPS, a size change sends a new start;
 * and the capability: the first viewer starts the device stream, a viewer past the cap is refused
 * (429 naming the cap), the stream stops a linger after the last viewer left (fake clock), teardown
 * ends every viewer with lease-ended, pointer input is mapped to the display and streamed to the
 * glass agent (one gesture on up with an agent that has no `touch` op), one finger per lease.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import type { ScreenEvent, ScreenSource, ScreenStreamOptions } from '../../src/helpers/screen/source.ts';
import { LeaseRoom, type LeaseSessionOptions, type LeaseTarget } from '../../src/lease-session/index.ts';
import { ScreenFanout, type ScreenViewerSink, ViewerQueue } from '../../src/lease-session/screen.ts';
import { decodePacketMessage, parseScreenTextMessage } from '../../src/protocol/screen/viewer-messages.ts';

const SPS = Uint8Array.of(0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1f, 0xda, 0x02);
const PPS = Uint8Array.of(0, 0, 0, 1, 0x68, 0xce, 0x0f, 0x20);
const CONFIG = Uint8Array.of(...SPS, ...PPS);
const INFO = {
  codec: 'h264' as const,
  width: 720,
  height: 1280,
  displayWidth: 1080,
  displayHeight: 1920,
  source: 'agent' as const,
};

const start = (info = INFO): ScreenEvent => ({ type: 'start', info });
const config = (data = CONFIG): ScreenEvent => ({
  type: 'packet',
  packet: { pts: 0, config: true, key: false, data },
});
/** A frame of `size` bytes: an IDR slice (key) or a non-IDR one, its first payload byte `tag`. */
function frame(pts: number, key: boolean, size = 100, tag = 0): ScreenEvent {
  const data = new Uint8Array(size);
  data.set([0, 0, 0, 1, key ? 0x65 : 0x41, tag]);
  return { type: 'packet', packet: { pts, config: false, key, data } };
}

/** A sink that writes at once (or holds every write while `stalled`) and records what it got. */
class TestSink implements ScreenViewerSink {
  readonly got: Array<string | Uint8Array> = [];
  readonly held: Array<() => void> = [];
  closed = false;
  constructor(public stalled = false) {}
  send(message: string | Uint8Array, done: (err?: Error | null) => void): void {
    this.got.push(message);
    // As a socket's write callback: null when written.
    if (this.stalled) this.held.push(() => done(null));
    else queueMicrotask(() => done(null));
  }
  close(): void {
    this.closed = true;
  }
  /** Let the writes held so far (and the ones they lead to) complete. */
  async release(): Promise<void> {
    this.stalled = false;
    while (this.held.length > 0) {
      this.held.shift()!();
      await Promise.resolve();
    }
  }
  texts() {
    return this.got.filter((m) => typeof m === 'string').map((m) => parseScreenTextMessage(m));
  }
  /** What arrived, in order: `start`, `skipped:N`, `end:reason`, `K<pts>` / `P<pts>`. */
  log(): string[] {
    return this.got.map((m) => {
      if (typeof m !== 'string') {
        const p = decodePacketMessage(m);
        return `${p.key ? 'K' : 'P'}${p.pts}`;
      }
      const t = parseScreenTextMessage(m);
      return t.type === 'skipped' ? `skipped:${t.frames}` : t.type === 'end' ? `end:${t.reason}` : t.type;
    });
  }
}

const flush = () => new Promise((r) => setImmediate(r));

describe('the fan-out', () => {
  it('sends start (with the codec string read from the SPS) once the config came, then frames; key frames carry the SPS/PPS', async () => {
    const fanout = new ScreenFanout(1 << 20);
    const sink = new TestSink();
    const q = new ViewerQueue(1 << 20);
    q.attach(sink);
    fanout.add(q);
    fanout.push(start());
    fanout.push(config());
    fanout.push(frame(0, true));
    fanout.push(frame(33_333, false));
    await flush();
    expect(sink.log()).toEqual(['start', 'K0', 'P33333']);
    expect(sink.texts()[0]).toEqual({
      type: 'start',
      codec: 'avc1.42c01f',
      width: 720,
      height: 1280,
      displayWidth: 1080,
      displayHeight: 1920,
      source: 'agent',
    });
    const key = decodePacketMessage(sink.got[1] as Uint8Array);
    expect([...key.data.subarray(0, CONFIG.byteLength)]).toEqual([...CONFIG]);
    expect(key.data.byteLength).toBe(CONFIG.byteLength + 100);
    const p = decodePacketMessage(sink.got[2] as Uint8Array);
    expect(p.data.byteLength).toBe(100);
  });

  it('gives a viewer that joins the start and the frames since the last key frame at once', async () => {
    const fanout = new ScreenFanout(1 << 20);
    fanout.push(start());
    fanout.push(config());
    fanout.push(frame(0, true));
    fanout.push(frame(1, false));
    fanout.push(frame(2, true));
    fanout.push(frame(3, false));
    const sink = new TestSink();
    const q = new ViewerQueue(1 << 20);
    q.attach(sink);
    fanout.add(q);
    fanout.push(frame(4, false));
    await flush();
    expect(sink.log()).toEqual(['start', 'K2', 'P3', 'P4']);
  });

  it('a viewer that joins when the frames since the last key frame do not fit its queue waits for the next key frame', async () => {
    const fanout = new ScreenFanout(1000);
    fanout.push(start());
    fanout.push(config());
    fanout.push(frame(0, true, 400));
    for (let pts = 1; pts < 5; pts++) fanout.push(frame(pts, false, 400));
    const sink = new TestSink();
    const q = new ViewerQueue(1000);
    q.attach(sink);
    fanout.add(q);
    fanout.push(frame(5, false, 400));
    fanout.push(frame(6, true, 400));
    fanout.push(frame(7, false, 400));
    await flush();
    expect(sink.log()).toEqual(['start', 'K6', 'P7']);
  });

  it('a viewer over its bound skips to the next key frame, told how many frames it lost; memory stays bounded', async () => {
    const bound = 1000;
    const fanout = new ScreenFanout(bound);
    const sink = new TestSink(true);
    const q = new ViewerQueue(bound);
    q.attach(sink);
    fanout.add(q);
    fanout.push(start());
    fanout.push(config());
    let pts = 0;
    fanout.push(frame(pts++, true, 200));
    for (let i = 0; i < 50; i++) {
      fanout.push(frame(pts++, false, 200));
      expect(q.stats().queuedBytes).toBeLessThanOrEqual(bound + 300);
    }
    fanout.push(frame(pts++, true, 200));
    fanout.push(frame(pts++, false, 200));
    await sink.release();
    await flush();
    const log = sink.log();
    // The start was written (held) first; then frames fit the bound; then the skip and the key frame.
    const skippedAt = log.findIndex((m) => m.startsWith('skipped:'));
    expect(skippedAt).toBeGreaterThan(0);
    expect(log.slice(skippedAt + 1)).toEqual(['K51', 'P52']);
    const skipped = Number(log[skippedAt]!.split(':')[1]);
    const framesBefore = log.slice(0, skippedAt).filter((m) => /^[KP]/.test(m)).length;
    // Every frame before the key frame 51 was either written or counted as skipped.
    expect(framesBefore + skipped).toBe(51);
    expect(q.stats().framesSkipped).toBe(skipped);
  });

  it('a stalled viewer never holds another back', async () => {
    const fanout = new ScreenFanout(4096);
    const stalled = new TestSink(true);
    const fast = new TestSink();
    for (const sink of [stalled, fast]) {
      const q = new ViewerQueue(4096);
      q.attach(sink);
      fanout.add(q);
    }
    fanout.push(start());
    fanout.push(config());
    for (let i = 0; i < 300; i++) {
      fanout.push(frame(i, i % 30 === 0, 500));
      await flush();
    }
    expect(fast.log()).toEqual([
      'start',
      ...Array.from({ length: 300 }, (_, i) => `${i % 30 === 0 ? 'K' : 'P'}${i}`),
    ]);
    // The stalled one holds one write and at most its bound.
    expect(stalled.got.length).toBe(1);
    const [stalledQueue] = [...fanout.viewers];
    expect(stalledQueue!.stats().queuedBytes).toBeLessThanOrEqual(4096 + 600);
    expect(stalledQueue!.stats().framesSkipped).toBeGreaterThan(250);
  });

  it('a size change sends a new start before the new key frame; frames before any start and config are not sent', async () => {
    const fanout = new ScreenFanout(1 << 20);
    const sink = new TestSink();
    const q = new ViewerQueue(1 << 20);
    q.attach(sink);
    fanout.add(q);
    fanout.push(frame(0, true));
    fanout.push(start());
    fanout.push(config());
    fanout.push(frame(1, true));
    fanout.push(start({ ...INFO, width: 1280, height: 720, displayWidth: 1920, displayHeight: 1080 }));
    fanout.push(frame(2, false)); // before the new config: undecodable, not sent
    const sps2 = Uint8Array.of(0, 0, 0, 1, 0x67, 0x64, 0x00, 0x28, 0xac);
    fanout.push(config(Uint8Array.of(...sps2, ...PPS)));
    fanout.push(frame(3, true));
    await flush();
    expect(sink.log()).toEqual(['start', 'K1', 'start', 'K3']);
    const starts = sink.texts().filter((t) => t.type === 'start');
    expect(starts[1]).toMatchObject({ codec: 'avc1.640028', width: 1280, height: 720, displayWidth: 1920 });
    const key = decodePacketMessage(sink.got[3] as Uint8Array);
    expect([...key.data.subarray(0, sps2.byteLength)]).toEqual([...sps2]);
  });

  it('end: the viewer gets its queued control messages and the end, queued frames are dropped, then the sink closes', async () => {
    const fanout = new ScreenFanout(1 << 20);
    const sink = new TestSink(true);
    const q = new ViewerQueue(1 << 20);
    q.attach(sink);
    fanout.add(q);
    fanout.push(start());
    fanout.push(config());
    fanout.push(frame(0, true));
    fanout.push(frame(1, false));
    fanout.end('lease-ended', 'lease x has ended');
    await sink.release();
    await flush();
    expect(sink.log()).toEqual(['start', 'end:lease-ended']);
    expect(sink.closed).toBe(true);
  });
});

/** A device stream of our own: the events pushed by the test, closed by the capability. */
class PushedSource implements ScreenSource {
  readonly #pending: ScreenEvent[] = [];
  #wake: (() => void) | undefined;
  closed = false;
  push(event: ScreenEvent): void {
    this.#pending.push(event);
    this.#wake?.();
  }
  async *events(): AsyncIterable<ScreenEvent> {
    while (!this.closed) {
      const next = this.#pending.shift();
      if (next !== undefined) yield next;
      else await new Promise<void>((r) => (this.#wake = r));
    }
  }
  async close(): Promise<void> {
    this.closed = true;
    this.#wake?.();
  }
}

const lease: LeaseTarget = { id: 'lease-1', deviceId: 'dev-1', fencingToken: 3, serial: 'emulator-5554' };

function room(
  limits: { maxViewers?: number; lingerMs?: number } = {},
  agentOptions: { touch?: boolean } = {},
) {
  const fence = { ended: false };
  const opened: Array<{ options: ScreenStreamOptions; source: PushedSource }> = [];
  const agent: Array<[string, Record<string, unknown>]> = [];
  const options = {
    adb: { ledger: { release: async () => ({ removed: [], failed: [] }) } },
    fence: {
      checkFence: async () => {
        if (fence.ended) throw new BridgeError('LEASE_EXPIRED', 'lease lease-1 was released');
      },
    },
    openScreenSource: async (_target: LeaseTarget, o: ScreenStreamOptions) => {
      const source = new PushedSource();
      opened.push({ options: o, source });
      return source;
    },
    screen: limits,
  } as unknown as LeaseSessionOptions;
  const r = new LeaseRoom(options);
  // The glass agent's requests, recorded (the capability sends input through it).
  r.glass.agent = async (_l, op, fields = {}) => {
    agent.push([op, fields]);
    if (op === 'touch' && agentOptions.touch === false) {
      // An agent without the op answers as the line client reports any device refusal.
      throw new BridgeError('HELPER_FAILED', 'glass-agent refused touch: unknown op: touch', {
        retryable: false,
        details: { component: 'glass-agent', op, deviceError: 'unknown op: touch' },
      });
    }
    return { id: agent.length, ok: true as const };
  };
  return { room: r, opened, agent, fence };
}

describe('the live screen capability', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts one device stream for the first viewer, shares it, refuses a viewer past the cap naming it', async () => {
    const { room: r, opened } = room({ maxViewers: 2 });
    const a = await r.screen.join(lease, { maxSize: 800 });
    const b = await r.screen.join(lease, { maxSize: 2000 });
    await expect(r.screen.join(lease)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('DEVICEBRIDGE_SCREEN_MAX_VIEWERS=2'),
      details: { maxViewers: 2 },
    });
    await flush();
    expect(opened.map((o) => o.options)).toEqual([{ maxSize: 800 }]);
    const sinks = [new TestSink(), new TestSink()];
    a.attach(sinks[0]!);
    b.attach(sinks[1]!);
    const source = opened[0]!.source;
    source.push(start());
    source.push(config());
    source.push(frame(0, true));
    await vi.waitFor(() =>
      expect(sinks.map((s) => s.log())).toEqual([
        ['start', 'K0'],
        ['start', 'K0'],
      ]),
    );
    // One leaving frees a place.
    a.leave();
    const c = await r.screen.join(lease);
    c.leave();
    b.leave();
  });

  it('stops the device stream a linger after the last viewer left; a viewer within the linger keeps it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { room: r, opened } = room({ lingerMs: 2000 });
    const a = await r.screen.join(lease);
    await vi.waitFor(() => expect(opened).toHaveLength(1));
    a.leave();
    vi.advanceTimersByTime(1999);
    const b = await r.screen.join(lease);
    vi.advanceTimersByTime(5000);
    expect(opened[0]!.source.closed).toBe(false);
    b.leave();
    vi.advanceTimersByTime(1999);
    expect(opened[0]!.source.closed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(opened[0]!.source.closed).toBe(true);
    // The next viewer starts a new stream.
    const c = await r.screen.join(lease);
    await vi.waitFor(() => expect(opened).toHaveLength(2));
    c.leave();
  });

  it('teardown ends every viewer with lease-ended, stops the device stream and records it', async () => {
    const { room: r, opened, fence } = room({ lingerMs: 0 });
    const a = await r.screen.join(lease);
    const sink = new TestSink();
    a.attach(sink);
    await vi.waitFor(() => expect(opened).toHaveLength(1));
    fence.ended = true;
    const record = await r.closeLease(lease.id);
    expect(record.actions).toContain('stopped the live screen');
    expect(opened[0]!.source.closed).toBe(true);
    await flush();
    expect(sink.log()).toEqual(['end:lease-ended']);
    expect(sink.closed).toBe(true);
    // A viewer joining the ended lease is refused, and the stream it started stops again.
    await expect(r.screen.join(lease)).rejects.toMatchObject({ code: 'LEASE_EXPIRED' });
    await vi.waitFor(() => expect(opened[1]?.source.closed).toBe(true));
    expect(r.screen.stats(lease.id)).toEqual([]);
  });

  it('teardown while the device stream is still starting waits for it and stops it', async () => {
    let opening: ((source: PushedSource) => void) | undefined;
    const sources: PushedSource[] = [];
    const options = {
      adb: { ledger: { release: async () => ({ removed: [], failed: [] }) } },
      fence: { checkFence: async () => undefined },
      openScreenSource: () =>
        new Promise<PushedSource>((resolve) => {
          opening = (source) => {
            sources.push(source);
            resolve(source);
          };
        }),
    } as unknown as LeaseSessionOptions;
    const r = new LeaseRoom(options);
    const a = await r.screen.join(lease);
    a.attach(new TestSink());
    await vi.waitFor(() => expect(opening).toBeDefined());
    let stoppedWhenTornDown: boolean | undefined;
    const closing = r.closeLease(lease.id).then((record) => {
      stoppedWhenTornDown = sources[0]?.closed;
      return record;
    });
    // The teardown runs as far as it can while the device stream is still starting.
    for (let i = 0; i < 20; i++) await flush();
    opening!(new PushedSource());
    const record = await closing;
    expect(record.actions).toContain('stopped the live screen');
    expect(stoppedWhenTornDown).toBe(true);
  });

  it('a failing device stream ends its viewers with stream-failed and the message', async () => {
    const options = {
      adb: { ledger: { release: async () => ({ removed: [], failed: [] }) } },
      fence: { checkFence: async () => undefined },
      openScreenSource: async () => {
        throw new Error('the glass agent cannot encode on this device');
      },
    } as unknown as LeaseSessionOptions;
    const r = new LeaseRoom(options);
    const a = await r.screen.join(lease);
    const sink = new TestSink();
    a.attach(sink);
    await vi.waitFor(() => expect(sink.closed).toBe(true));
    expect(sink.texts()).toEqual([
      { type: 'end', reason: 'stream-failed', message: 'the glass agent cannot encode on this device' },
    ]);
  });

  /** A viewer of a started picture (720×1280 on a 1080×1920 display). */
  async function started(r: LeaseRoom, opened: Array<{ source: PushedSource }>) {
    const a = await r.screen.join(lease);
    const sink = new TestSink();
    a.attach(sink);
    await vi.waitFor(() => expect(opened).toHaveLength(1));
    opened[0]!.source.push(start());
    opened[0]!.source.push(config());
    await vi.waitFor(() => expect(sink.log()).toContain('start'));
    return { a, sink };
  }

  const errorsOf = (sink: TestSink) =>
    sink
      .texts()
      .filter((t) => t.type === 'error')
      .map((e) => e.type === 'error' && `${e.code}: ${e.message}`);

  it('streams pointer down/move/up to the agent as they come, mapped from the picture to the display; keys and text in order', async () => {
    const { room: r, opened, agent } = room();
    const a = await r.screen.join(lease);
    const sink = new TestSink();
    a.attach(sink);
    await vi.waitFor(() => expect(opened).toHaveLength(1));
    // Before the picture started there is nothing to map to: an error message, the socket stays.
    a.input({ type: 'pointer', action: 'down', x: 10, y: 10 });
    opened[0]!.source.push(start());
    opened[0]!.source.push(config());
    await vi.waitFor(() => expect(sink.log()).toContain('start'));
    a.input({ type: 'pointer', action: 'down', x: 360, y: 640 });
    // The down reaches the agent before anything else is sent: the device has the finger at once.
    await vi.waitFor(() => expect(agent).toEqual([['touch', { action: 'down', x: 540, y: 960 }]]));
    a.input({ type: 'pointer', action: 'move', x: 400, y: 700 });
    await vi.waitFor(() => expect(agent).toHaveLength(2));
    a.input({ type: 'pointer', action: 'up', x: 719, y: 1279 });
    a.input({ type: 'text', text: 'Grüße' });
    a.input({ type: 'key', key: 'enter' });
    a.input({ type: 'pointer', action: 'up', x: 1, y: 1 });
    a.input({ type: 'pointer', action: 'down', x: 720, y: 0 });
    await vi.waitFor(() => expect(agent).toHaveLength(5));
    expect(agent).toEqual([
      ['touch', { action: 'down', x: 540, y: 960 }],
      ['touch', { action: 'move', x: 600, y: 1050 }],
      ['touch', { action: 'up', x: 1079, y: 1919 }],
      ['text', { text: 'Grüße' }],
      ['key', { chord: 'enter' }],
    ]);
    expect(errorsOf(sink)).toEqual([
      expect.stringContaining('has not started'),
      expect.stringContaining('without a pointer down'),
      expect.stringContaining('outside the 720×1280 picture'),
    ]);
    a.leave();
  });

  it('an agent without the touch op: the same pointer goes as one gesture on up, with every point and its timing, and so does every later one', async () => {
    const { room: r, opened, agent } = room({}, { touch: false });
    const { a, sink } = await started(r, opened);
    a.input({ type: 'pointer', action: 'down', x: 360, y: 640 });
    a.input({ type: 'pointer', action: 'move', x: 400, y: 700 });
    a.input({ type: 'pointer', action: 'move', x: 420, y: 720 });
    a.input({ type: 'pointer', action: 'up', x: 719, y: 1279 });
    await vi.waitFor(() => expect(agent.at(-1)?.[0]).toBe('pointer'));
    // The probe was the down: the agent's refusal is not the viewer's error.
    expect(agent.map(([op]) => op)).toEqual(['touch', 'pointer']);
    const points = (agent[1]![1] as { gesture: Array<{ x: number; y: number; t_ms: number }> }).gesture;
    expect(points.map(({ x, y }) => [x, y])).toEqual([
      [540, 960],
      [600, 1050],
      [630, 1080],
      [1079, 1919],
    ]);
    expect(points.map((p) => p.t_ms)).toEqual([...points.map((p) => p.t_ms)].sort((x, y) => x - y));
    // The lease's stream stays in gesture mode: no touch is tried again.
    a.input({ type: 'pointer', action: 'down', x: 10, y: 20 });
    a.input({ type: 'pointer', action: 'up', x: 10, y: 20 });
    await vi.waitFor(() => expect(agent).toHaveLength(3));
    expect(agent[2]).toEqual([
      'pointer',
      { gesture: [expect.objectContaining({ x: 15, y: 30 }), expect.objectContaining({ x: 15, y: 30 })] },
    ]);
    expect(errorsOf(sink)).toEqual([]);
    a.leave();
  });

  it('an up outside the picture is an error that still ends the finger (a cancel); a viewer that leaves with a finger down cancels it', async () => {
    const { room: r, opened, agent } = room();
    const { a, sink } = await started(r, opened);
    a.input({ type: 'pointer', action: 'down', x: 100, y: 100 });
    a.input({ type: 'pointer', action: 'up', x: 720, y: 100 });
    await vi.waitFor(() => expect(agent).toHaveLength(2));
    expect(agent[1]).toEqual(['touch', { action: 'cancel' }]);
    expect(errorsOf(sink)).toEqual([expect.stringContaining('outside the 720×1280 picture')]);
    a.input({ type: 'pointer', action: 'down', x: 200, y: 200 });
    a.input({ type: 'pointer', action: 'move', x: 210, y: 220 });
    a.leave();
    await vi.waitFor(() => expect(agent).toHaveLength(5));
    expect(agent.slice(2)).toEqual([
      ['touch', { action: 'down', x: 300, y: 300 }],
      ['touch', { action: 'move', x: 315, y: 330 }],
      ['touch', { action: 'cancel' }],
    ]);
  });

  it('a viewer’s cancel (the browser took the pointer over) ends the finger without an up: no click on the device', async () => {
    const { room: r, opened, agent } = room();
    const { a, sink } = await started(r, opened);
    a.input({ type: 'pointer', action: 'down', x: 100, y: 100 });
    a.input({ type: 'pointer', action: 'move', x: 110, y: 120 });
    a.input({ type: 'pointer', action: 'cancel', x: 110, y: 120 });
    await vi.waitFor(() => expect(agent).toHaveLength(3));
    expect(agent).toEqual([
      ['touch', { action: 'down', x: 150, y: 150 }],
      ['touch', { action: 'move', x: 165, y: 180 }],
      ['touch', { action: 'cancel' }],
    ]);
    // The finger is over: a move now has no finger, and a cancel with none down is nothing.
    a.input({ type: 'pointer', action: 'cancel', x: 0, y: 0 });
    a.input({ type: 'pointer', action: 'move', x: 5, y: 5 });
    await vi.waitFor(() => expect(errorsOf(sink)).toHaveLength(1));
    expect(errorsOf(sink)).toEqual([expect.stringContaining('without a pointer down')]);
    expect(agent).toHaveLength(3);
    a.leave();
  });

  it('one finger per lease: a second viewer’s down while the first one’s is down is refused (CONFLICT); after the up it is taken', async () => {
    const { room: r, opened, agent } = room();
    const { a } = await started(r, opened);
    const b = await r.screen.join(lease);
    const bSink = new TestSink();
    b.attach(bSink);
    a.input({ type: 'pointer', action: 'down', x: 100, y: 100 });
    b.input({ type: 'pointer', action: 'down', x: 500, y: 500 });
    // The refused finger's moves and up are dropped quietly.
    b.input({ type: 'pointer', action: 'move', x: 510, y: 510 });
    b.input({ type: 'pointer', action: 'up', x: 510, y: 510 });
    a.input({ type: 'pointer', action: 'up', x: 100, y: 100 });
    await vi.waitFor(() => expect(agent).toHaveLength(2));
    await vi.waitFor(() => expect(errorsOf(bSink)).toHaveLength(1));
    expect(errorsOf(bSink)).toEqual([
      expect.stringMatching(/^CONFLICT: another viewer of this lease has a pointer down/),
    ]);
    // The up's answer came (the recording agent answers at once): the finger is free.
    await flush();
    b.input({ type: 'pointer', action: 'down', x: 500, y: 500 });
    b.input({ type: 'pointer', action: 'up', x: 500, y: 500 });
    await vi.waitFor(() => expect(agent).toHaveLength(4));
    expect(agent.map(([, f]) => `${f['action']} ${f['x']},${f['y']}`)).toEqual([
      'down 150,150',
      'up 150,150',
      'down 750,750',
      'up 750,750',
    ]);
    a.leave();
    b.leave();
  });
});
