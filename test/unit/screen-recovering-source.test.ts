/**
 * The encoder kept going (src/helpers/screen/recovering-source.ts) over sources of our own: the
 * restarts' bound and its window, the move to screenrecord, a device that went away ending the
 * stream with its error, `start` passed on only for a new shape, presentation times that never go
 * back across sources, and close while a replacement is starting.
 */
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { ScreenEventQueue } from '../../src/helpers/screen/event-queue.ts';
import { RecoveringScreenSource } from '../../src/helpers/screen/recovering-source.ts';
import type { ScreenEvent, ScreenSource, ScreenStreamInfo } from '../../src/helpers/screen/source.ts';

const INFO: ScreenStreamInfo = {
  codec: 'h264',
  width: 144,
  height: 320,
  displayWidth: 1080,
  displayHeight: 2400,
  source: 'agent',
  codecString: 'avc1.42c015',
};

/** A source whose events the test pushes; `die()` ends it with an error, as a crashed encoder's. */
class TestSource implements ScreenSource {
  readonly queue = new ScreenEventQueue();
  closed = false;
  constructor(readonly kind: 'agent' | 'screenrecord') {}
  events(): AsyncIterable<ScreenEvent> {
    return this.queue.iterate();
  }
  async close(): Promise<void> {
    this.closed = true;
    this.queue.end();
  }
  start(info: Partial<ScreenStreamInfo> = {}): void {
    this.queue.push({ type: 'start', info: { ...INFO, source: this.kind, ...info } });
  }
  packet(pts: number, key = false): void {
    this.queue.push({
      type: 'packet',
      packet: { pts, config: false, key, data: Uint8Array.of(0, 0, 0, 1, key ? 0x65 : 0x41) },
    });
  }
  die(): void {
    this.queue.end(new BridgeError('HELPER_FAILED', "the glass agent's screen stream ended"));
  }
}

function reader(source: ScreenSource) {
  const events: ScreenEvent[] = [];
  const state: { error: unknown; done: boolean } = { error: null, done: false };
  void (async () => {
    try {
      for await (const e of source.events()) events.push(e);
    } catch (err) {
      state.error = err;
    }
    state.done = true;
  })();
  return { events, state };
}

const tick = () => new Promise((r) => setImmediate(r));
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await tick();
  }
  throw new Error(`never: ${what}`);
}

/** A recovering source over a first agent source, with starts the test answers. */
function setup(options: { restarts?: number; restartWindowMs?: number } = {}) {
  const first = new TestSource('agent');
  const agents: TestSource[] = [first];
  const recordings: TestSource[] = [];
  let agentStart: () => Promise<ScreenSource> = async () => {
    const next = new TestSource('agent');
    agents.push(next);
    return next;
  };
  const source = new RecoveringScreenSource(first, {
    serial: 'emulator-5554',
    startAgent: () => agentStart(),
    startScreenrecord: async () => {
      const next = new TestSource('screenrecord');
      recordings.push(next);
      return next;
    },
    ...options,
  });
  return {
    source,
    agents,
    recordings,
    setAgentStart(fn: () => Promise<ScreenSource>) {
      agentStart = fn;
    },
  };
}

describe('RecoveringScreenSource', () => {
  it('starts a dead encoder again up to the bound, then screenrecord; one start for one shape; times never go back', async () => {
    const { source, agents, recordings } = setup({ restarts: 2 });
    const r = reader(source);
    agents[0]!.start();
    agents[0]!.packet(5_000_000, true);
    agents[0]!.packet(5_100_000);
    agents[0]!.die();
    await until(() => agents.length === 2, 'a second encoder');
    expect(agents[0]!.closed).toBe(true);
    // A restarted encoder's clock starts over (the simulator's) or not (a device's): either way after.
    agents[1]!.start();
    agents[1]!.packet(0, true);
    agents[1]!.packet(100_000);
    agents[1]!.die();
    await until(() => agents.length === 3, 'a third encoder');
    agents[2]!.start();
    agents[2]!.packet(9_000_000_000, true);
    agents[2]!.die();
    await until(() => recordings.length === 1, 'screenrecord');
    expect(agents).toHaveLength(3);
    expect(source.restarts).toBe(2);
    expect(source.kind).toBe('screenrecord');
    recordings[0]!.start();
    recordings[0]!.packet(0, true);
    // Another codec: a new start.
    recordings[0]!.start({ codecString: 'avc1.64001f' });
    recordings[0]!.packet(10, true);
    await until(() => r.events.length === 9, 'every event');
    await source.close();
    await until(() => r.state.done, 'the end');
    expect(r.state.error).toBeNull();
    expect(recordings[0]!.closed).toBe(true);
    const starts = r.events.filter((e) => e.type === 'start');
    expect(starts.map((e) => e.info.codecString)).toEqual(['avc1.42c015', 'avc1.64001f']);
    const pts = r.events.flatMap((e) => (e.type === 'packet' ? [e.packet.pts] : []));
    expect(pts).toHaveLength(7);
    expect(pts[0]).toBe(5_000_000);
    for (let i = 1; i < pts.length; i++) expect(pts[i]).toBeGreaterThanOrEqual(pts[i - 1]!);
    // Within one source the spacing is kept.
    expect(pts[3]! - pts[2]!).toBe(100_000);
  });

  it('restarts outside the window do not count against the bound', async () => {
    const { source, agents, recordings } = setup({ restarts: 1, restartWindowMs: 0 });
    reader(source);
    for (let i = 0; i < 4; i++) {
      agents[i]!.die();
      await until(() => agents.length === i + 2, `encoder ${i + 2}`);
    }
    expect(recordings).toEqual([]);
    expect(source.restarts).toBe(4);
    await source.close();
  });

  it('an encoder that cannot be started again: screenrecord at once', async () => {
    const { source, agents, recordings, setAgentStart } = setup();
    reader(source);
    setAgentStart(async () => {
      throw new BridgeError('COMPANION_UNSUPPORTED', 'the glass agent cannot encode');
    });
    agents[0]!.die();
    await until(() => recordings.length === 1, 'screenrecord');
    expect(source.restarts).toBe(1);
    await source.close();
  });

  it('a device that went away ends the stream with its error; no screenrecord is tried', async () => {
    const { source, agents, recordings, setAgentStart } = setup();
    const r = reader(source);
    setAgentStart(async () => {
      throw new BridgeError('DEVICE_OFFLINE', 'device emulator-5554 is offline');
    });
    agents[0]!.die();
    await until(() => r.state.done, 'the end');
    expect(r.state.error).toMatchObject({ code: 'DEVICE_OFFLINE' });
    expect(recordings).toEqual([]);
  });

  it('screenrecord failing in turn ends the stream with its error', async () => {
    const { source, agents, recordings, setAgentStart } = setup();
    const r = reader(source);
    setAgentStart(async () => {
      throw new BridgeError('COMPANION_UNSUPPORTED', 'no encoder');
    });
    agents[0]!.die();
    await until(() => recordings.length === 1, 'screenrecord');
    recordings[0]!.queue.end(new BridgeError('HELPER_FAILED', 'screenrecord on emulator-5554 ended'));
    await until(() => r.state.done, 'the end');
    expect(r.state.error).toMatchObject({ message: 'screenrecord on emulator-5554 ended' });
    expect(recordings[0]!.closed).toBe(true);
  });

  it('close while a replacement is starting waits for it and stops it', async () => {
    const { source, agents, setAgentStart } = setup();
    const r = reader(source);
    let started: ((s: TestSource) => void) | undefined;
    setAgentStart(
      () =>
        new Promise<ScreenSource>((resolve) => {
          started = resolve;
        }),
    );
    agents[0]!.die();
    await until(() => started !== undefined, 'the restart begun');
    let closed = false;
    const closing = source.close().then(() => {
      closed = true;
    });
    await tick();
    expect(closed).toBe(false);
    const late = new TestSource('agent');
    started!(late);
    await closing;
    expect(late.closed).toBe(true);
    await until(() => r.state.done, 'the end');
    expect(r.state.error).toBeNull();
  });
});
