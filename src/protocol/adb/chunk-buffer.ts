/**
 * Bytes received in pieces, taken out again in exact lengths: a view when one piece holds them all,
 * otherwise one copy. Shared by the adb message and sync request decoders.
 */
export class ChunkBuffer {
  #chunks: Buffer[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#chunks.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.#length += bytes.length;
  }

  /** Remove and return the next `n` bytes; the caller checks `length >= n` first. */
  take(n: number): Buffer {
    const first = this.#chunks[0]!;
    if (first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      this.#length -= n;
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.#chunks[0]!;
      const want = n - filled;
      if (chunk.length <= want) {
        chunk.copy(out, filled);
        filled += chunk.length;
        this.#chunks.shift();
      } else {
        chunk.copy(out, filled, 0, want);
        this.#chunks[0] = chunk.subarray(want);
        filled += want;
      }
    }
    this.#length -= n;
    return out;
  }
}
