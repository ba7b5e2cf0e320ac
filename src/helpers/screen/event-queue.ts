/**
 * The events of one screen source for its one reader: pushed by the device side, read through an
 * async iterator, ended (or failed: the iterator throws the error) once. Backpressure: past
 * `highWater` queued events `onPressure(true)` asks the producer to pause reading the device,
 * `onPressure(false)` when the reader has brought it down to `lowWater`.
 */
import type { ScreenEvent } from './source.ts';

export class ScreenEventQueue {
  readonly #items: ScreenEvent[] = [];
  #waiting: (() => void) | null = null;
  #ended = false;
  #error: Error | null = null;
  #iterating = false;
  #pressured = false;
  readonly #highWater: number;
  readonly #lowWater: number;
  onPressure: (paused: boolean) => void = () => undefined;

  constructor(highWater = 240, lowWater = 60) {
    this.#highWater = highWater;
    this.#lowWater = lowWater;
  }

  get ended(): boolean {
    return this.#ended;
  }

  push(event: ScreenEvent): void {
    if (this.#ended) return;
    this.#items.push(event);
    if (!this.#pressured && this.#items.length >= this.#highWater) {
      this.#pressured = true;
      this.onPressure(true);
    }
    this.#wake();
  }

  /** No more events; with `error` the reader's iteration throws it after the queued events. */
  end(error: Error | null = null): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#wake();
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting?.();
  }

  async *iterate(): AsyncGenerator<ScreenEvent> {
    if (this.#iterating) throw new Error('a screen source has one reader: events() was called twice');
    this.#iterating = true;
    for (;;) {
      const next = this.#items.shift();
      if (next !== undefined) {
        if (this.#pressured && this.#items.length <= this.#lowWater) {
          this.#pressured = false;
          this.onPressure(false);
        }
        yield next;
        continue;
      }
      if (this.#ended) {
        if (this.#error !== null) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
    }
  }
}
