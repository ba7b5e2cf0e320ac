/** Work per event-loop turn and timeouts that count responsive time only (src/event-loop-turns.ts). */
import { describe, expect, it } from 'vitest';
import { responsiveTimeout, TurnBudget } from '../../src/event-loop-turns.ts';
import { waitFor } from '../support/wait-for.ts';

/** Hold the event loop for `ms` (a node busy with synchronous work). */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

describe('responsiveTimeout', () => {
  it("a stall of the process's own longer than the timeout does not abort it; a quiet wait does", async () => {
    const bound = responsiveTimeout(200, 50);
    try {
      stall(400);
      // The ticks that were due during the stall count 100 ms at most: not aborted after it.
      await new Promise((resolve) => setImmediate(resolve));
      expect(bound.signal.aborted).toBe(false);
      // A responsive wait for an answer that does not come still ends.
      await waitFor(() => bound.signal.aborted, { what: 'the timeout to pass' });
      expect(String(bound.signal.reason)).toContain('no answer within 200 ms');
    } finally {
      bound.dispose();
    }
  });

  it('dispose stops it', async () => {
    const bound = responsiveTimeout(20, 5);
    bound.dispose();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(bound.signal.aborted).toBe(false);
  });
});

describe('TurnBudget', () => {
  it('resolves at once within the budget, after a turn of the event loop past it', async () => {
    const turns = new TurnBudget(100);
    expect(turns.spend(60)).toBeUndefined();
    // Queued before the spend past the budget: it runs before that spend resolves (the loop turned).
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const past = turns.spend(60);
    expect(past).toBeInstanceOf(Promise);
    expect(turned).toBe(false);
    await past;
    expect(turned).toBe(true);
    expect(turns.spend(60)).toBeUndefined();
  });
});
