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
  /** The reader stopped, or was given the end. */
  #done = false;
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

  /**
   * The reader's iterator. Written by hand rather than as an async generator: an event already
   * queued is answered with one settled promise, without a generator's resumption and awaits per
   * event (this runs once per frame).
   */
  iterate(): AsyncIterable<ScreenEvent> {
    if (this.#iterating) throw new Error('a screen source has one reader: events() was called twice');
    this.#iterating = true;
    const iterator: AsyncIterableIterator<ScreenEvent> = {
      next: () => this.#next(),
      return: () => {
        this.#done = true;
        return Promise.resolve({ done: true, value: undefined });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  #next(): Promise<IteratorResult<ScreenEvent>> {
    let item: IteratorResult<ScreenEvent> | null;
    try {
      item = this.#take();
    } catch (err) {
      return Promise.reject(err);
    }
    if (item !== null) return Promise.resolve(item);
    return new Promise<void>((resolve) => {
      this.#waiting = resolve;
    }).then(() => this.#next());
  }

  /** The next result when one is ready (an event, the end, the error), else null. */
  #take(): IteratorResult<ScreenEvent> | null {
    if (this.#done) return { done: true, value: undefined };
    const next = this.#items.shift();
    if (next !== undefined) {
      if (this.#pressured && this.#items.length <= this.#lowWater) {
        this.#pressured = false;
        this.onPressure(false);
      }
      return { done: false, value: next };
    }
    if (this.#ended) {
      this.#done = true;
      if (this.#error !== null) throw this.#error;
      return { done: true, value: undefined };
    }
    return null;
  }
}
