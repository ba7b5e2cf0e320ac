/**
 * A live-screen viewer's input on its way to the glass agent (src/lease-session/screen-input.ts),
 * against an agent of our own whose answers the test releases one at a time: moves that wait behind
 * a request in flight are coalesced to the latest, nothing is reordered, an up is always sent; an
 * agent without the `touch` op turns the lease's pointers into one gesture on up; a failed touch is
 * answered once and cancelled; one finger per lease.
 */
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { isUnknownOp, TouchChannel, ViewerInput } from '../../src/lease-session/screen-input.ts';

/** An agent whose requests wait until the test answers them, in order. */
class HeldAgent {
  readonly sent: Array<[string, Record<string, unknown>]> = [];
  readonly #waiting: Array<{ resolve(): void; reject(err: unknown): void }> = [];

  call = (op: string, fields: Record<string, unknown>): Promise<unknown> => {
    this.sent.push([op, fields]);
    return new Promise((resolve, reject) =>
      this.#waiting.push({ resolve: () => resolve({ ok: true }), reject }),
    );
  };

  get pending(): number {
    return this.#waiting.length;
  }

  /** Answer the oldest request (ok, or with `err`), then let the input send its next one. */
  async answer(err?: unknown): Promise<void> {
    const next = this.#waiting.shift();
    if (next === undefined) throw new Error('no request is waiting');
    if (err === undefined) next.resolve();
    else next.reject(err);
    await new Promise((r) => setImmediate(r));
  }

  /** Answer every request, including those the answers lead to. */
  async drain(): Promise<void> {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (this.pending === 0) return;
      await this.answer();
    }
  }

  ops(): string[] {
    return this.sent.map(([op, f]) =>
      op === 'touch'
        ? `${f['action']}${'x' in f ? ` ${f['x']},${f['y']}` : ''}`
        : `${op} ${JSON.stringify(f)}`,
    );
  }
}

const unknownTouch = () =>
  new BridgeError('HELPER_FAILED', 'glass-agent refused touch: unknown op: touch', {
    details: { component: 'glass-agent', op: 'touch', deviceError: 'unknown op: touch' },
  });

function viewer(channel = new TouchChannel(), agent = new HeldAgent()) {
  const replies: string[] = [];
  let clock = 0;
  const input = new ViewerInput({
    channel,
    call: agent.call,
    reply: (err) => replies.push(err instanceof Error ? err.message : String(err)),
    now: () => (clock += 10),
  });
  return { input, agent, replies, channel };
}

describe('a viewer’s pointer stream', () => {
  it('coalesces moves waiting behind a request in flight to the latest; the up is always sent, after them', async () => {
    const { input, agent } = viewer();
    input.pointer('down', { x: 1, y: 1 });
    expect(agent.ops()).toEqual(['down 1,1']);
    for (let i = 2; i <= 50; i++) input.pointer('move', { x: i, y: i });
    await agent.answer();
    // Forty-nine moves came while the down was in flight: the latest one goes.
    expect(agent.ops()).toEqual(['down 1,1', 'move 50,50']);
    input.pointer('move', { x: 60, y: 60 });
    input.pointer('move', { x: 70, y: 70 });
    input.pointer('up', { x: 71, y: 71 });
    await agent.drain();
    expect(agent.ops()).toEqual(['down 1,1', 'move 50,50', 'move 70,70', 'up 71,71']);
  });

  it('never passes a key or text: moves coalesce only with the move right before them', async () => {
    const { input, agent } = viewer();
    input.pointer('down', { x: 1, y: 1 });
    input.pointer('move', { x: 2, y: 2 });
    input.key('shift');
    input.pointer('move', { x: 3, y: 3 });
    input.pointer('move', { x: 4, y: 4 });
    input.text('a');
    input.pointer('up', { x: 5, y: 5 });
    await agent.drain();
    expect(agent.ops()).toEqual([
      'down 1,1',
      'move 2,2',
      'key {"chord":"shift"}',
      'move 4,4',
      'text {"text":"a"}',
      'up 5,5',
    ]);
  });

  it('sends nothing twice at once: each request waits for the answer to the one before', async () => {
    const { input, agent } = viewer();
    input.pointer('down', { x: 1, y: 1 });
    input.pointer('move', { x: 2, y: 2 });
    input.pointer('up', { x: 3, y: 3 });
    expect(agent.pending).toBe(1);
    await agent.answer();
    expect(agent.pending).toBe(1);
    await agent.drain();
    expect(agent.sent).toHaveLength(3);
    await input.idle();
  });

  it('a move or up without a down is INVALID_ARGUMENT; a cancel without one is nothing', () => {
    const { input, agent } = viewer();
    expect(() => input.pointer('move', { x: 1, y: 1 })).toThrow(/pointer move without a pointer down/);
    expect(() => input.pointer('up', { x: 1, y: 1 })).toThrow(/pointer up without a pointer down/);
    input.pointer('cancel');
    expect(agent.sent).toEqual([]);
  });
});

describe('an agent without the touch op', () => {
  it('turns the pointer it refused into one gesture on up, with every point in order and its time, and the next ones too', async () => {
    const { input, agent, replies, channel } = viewer();
    input.pointer('down', { x: 1, y: 1 });
    input.pointer('move', { x: 2, y: 2 });
    input.pointer('move', { x: 3, y: 3 });
    input.pointer('up', { x: 4, y: 4 });
    await agent.answer(unknownTouch());
    expect(channel.mode).toBe('gesture');
    await agent.drain();
    expect(agent.sent.map(([op]) => op)).toEqual(['touch', 'pointer']);
    expect(agent.sent[1]![1]).toEqual({
      gesture: [
        { x: 1, y: 1, t_ms: 0 },
        { x: 2, y: 2, t_ms: 10 },
        { x: 3, y: 3, t_ms: 20 },
        { x: 4, y: 4, t_ms: 30 },
      ],
    });
    input.pointer('down', { x: 9, y: 9 });
    input.pointer('up', { x: 9, y: 9 });
    await agent.drain();
    expect(agent.sent.map(([op]) => op)).toEqual(['touch', 'pointer', 'pointer']);
    expect(replies).toEqual([]);
  });

  it('recognises the agent’s unknown-op answer and nothing else', () => {
    expect(isUnknownOp(unknownTouch(), 'touch')).toBe(true);
    expect(isUnknownOp(unknownTouch(), 'key')).toBe(false);
    expect(
      isUnknownOp(
        new BridgeError('HELPER_FAILED', 'x', { details: { deviceError: 'injection refused' } }),
        'touch',
      ),
    ).toBe(false);
    expect(isUnknownOp(new Error('unknown op: touch'), 'touch')).toBe(false);
  });
});

describe('failures and fingers', () => {
  it('a failed touch is answered once, cancelled at once, and the rest of that finger is not sent', async () => {
    const { input, agent, replies, channel } = viewer();
    input.pointer('down', { x: 1, y: 1 });
    await agent.answer();
    expect(channel.mode).toBe('stream');
    input.pointer('move', { x: 2, y: 2 });
    input.pointer('move', { x: 3, y: 3 });
    await agent.answer(new BridgeError('HELPER_FAILED', 'glass-agent refused touch: injection refused'));
    input.pointer('move', { x: 4, y: 4 });
    input.pointer('up', { x: 5, y: 5 });
    await agent.drain();
    // The move that waited behind the failed one, the later move and the up were not sent.
    expect(agent.ops()).toEqual(['down 1,1', 'move 2,2', 'cancel']);
    expect(replies).toEqual(['glass-agent refused touch: injection refused']);
    // The next finger is streamed again.
    input.pointer('down', { x: 6, y: 6 });
    input.pointer('up', { x: 6, y: 6 });
    await agent.drain();
    expect(agent.ops().slice(3)).toEqual(['down 6,6', 'up 6,6']);
  });

  it('one finger per lease: another viewer’s down is CONFLICT until the up was answered; a viewer that leaves cancels its finger', async () => {
    const channel = new TouchChannel();
    const a = viewer(channel);
    const b = viewer(channel);
    a.input.pointer('down', { x: 1, y: 1 });
    expect(() => b.input.pointer('down', { x: 2, y: 2 })).toThrow(
      /another viewer of this lease has a pointer down/,
    );
    // The refused finger's moves and up are dropped without more errors.
    b.input.pointer('move', { x: 3, y: 3 });
    b.input.pointer('up', { x: 3, y: 3 });
    a.input.pointer('up', { x: 1, y: 1 });
    expect(() => b.input.pointer('down', { x: 2, y: 2 })).toThrow(/CONFLICT|another viewer/);
    await a.agent.drain();
    b.input.pointer('down', { x: 2, y: 2 });
    b.input.pointer('move', { x: 4, y: 4 });
    b.input.leave();
    await b.agent.drain();
    expect(b.agent.ops()).toEqual(['down 2,2', 'move 4,4', 'cancel']);
    // Left: the finger is free for the other viewer.
    a.input.pointer('down', { x: 7, y: 7 });
    expect(a.agent.ops().at(-1)).toBe('down 7,7');
  });
});
