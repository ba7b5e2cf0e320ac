/**
 * When the live screen feeds its encoder a frame: a changed screen as soon as it changes, never
 * sooner than 1/maxFps after the previous frame (the display's frame rate cap), and — when the last
 * frame is repeated while idle — again 1/maxFps after the previous one. Pure: times are passed in
 * (milliseconds on any monotonic clock).
 */
export class FramePacer {
  readonly #interval: number;
  #lastFrameAt = Number.NEGATIVE_INFINITY;

  constructor(maxFps: number) {
    if (!(maxFps > 0)) throw new RangeError(`max fps must be above 0, got ${maxFps}`);
    this.#interval = 1000 / maxFps;
  }

  /** A frame was fed at `now`. */
  fed(now: number): void {
    this.#lastFrameAt = now;
  }

  /** How long after `now` the next frame may be fed: 0 when it may be fed now. */
  wait(now: number): number {
    return Math.max(0, this.#lastFrameAt + this.#interval - now);
  }
}
