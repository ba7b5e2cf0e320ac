/**
 * When the live screen feeds its encoder a frame: time is cut into slots of 1/maxFps from the first
 * frame (a display's refresh grid), and a slot carries at most one frame. A changed screen goes as
 * soon as it changes when the current slot is still free, else at the start of the next one; the
 * last frame repeated while idle goes at the start of each slot. Counting from the grid rather than
 * from the previous frame keeps the rate at maxFps although timers fire late (a frame a little late
 * in its slot does not push the next slot back). Pure: times are passed in (milliseconds on any
 * monotonic clock).
 */
export class FramePacer {
  readonly #interval: number;
  /** Start of slot 0 (the first frame's time); null before the first frame. */
  #origin: number | null = null;
  /** The last slot that carried a frame. */
  #lastSlot = Number.NEGATIVE_INFINITY;

  constructor(maxFps: number) {
    if (!(maxFps > 0)) throw new RangeError(`max fps must be above 0, got ${maxFps}`);
    this.#interval = 1000 / maxFps;
  }

  #slot(now: number): number {
    // A time computed as a slot's start may come out a hair below it in floating point: it is that slot.
    return this.#origin === null ? 0 : Math.floor((now - this.#origin) / this.#interval + 1e-9);
  }

  /** A frame was fed at `now`. */
  fed(now: number): void {
    this.#origin ??= now;
    this.#lastSlot = this.#slot(now);
  }

  /** How long after `now` the next frame may be fed: 0 when it may be fed now. */
  wait(now: number): number {
    if (this.#origin === null || this.#slot(now) > this.#lastSlot) return 0;
    return Math.max(0, this.#origin + (this.#lastSlot + 1) * this.#interval - now);
  }
}
