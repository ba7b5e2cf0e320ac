/**
 * An async-iterable queue of byte chunks: the host's stdin as the emulated Android reads it.
 * `push` resolves once the queue has room again, so the stream can hold back its `OKAY` and the host
 * stops sending (adb's per-stream flow control) while the reader is slow.
 */
export class ByteQueue implements AsyncIterable<Uint8Array> {
  #chunks: Uint8Array[] = [];
  #bytes = 0;
  #ended = false;
  #highWater: number;
  #waitingReader: (() => void) | undefined;
  #roomWaiters: Array<() => void> = [];

  constructor(highWater = 1024 * 1024) {
    this.#highWater = highWater;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Queue a chunk; resolves when the queued bytes are below the high-water mark (or at end). */
  push(chunk: Uint8Array): Promise<void> {
    if (this.#ended || chunk.length === 0) return Promise.resolve();
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    this.#wakeReader();
    if (this.#bytes < this.#highWater) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push(resolve));
  }

  /** No more input (host closed stdin or the stream). Queued chunks are still delivered. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#wakeReader();
    this.#releaseWriters();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const chunk = this.#chunks.shift();
      if (chunk !== undefined) {
        this.#bytes -= chunk.length;
        if (this.#bytes < this.#highWater) this.#releaseWriters();
        yield chunk;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#waitingReader = resolve;
      });
    }
  }

  #wakeReader(): void {
    const wake = this.#waitingReader;
    this.#waitingReader = undefined;
    wake?.();
  }

  #releaseWriters(): void {
    const waiters = this.#roomWaiters;
    this.#roomWaiters = [];
    for (const release of waiters) release();
  }
}
