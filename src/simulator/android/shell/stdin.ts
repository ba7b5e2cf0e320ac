/**
 * The shell's standard input: a pull reader over the host's `AsyncIterable<Uint8Array>` that lets
 * one command take exactly N bytes (`cmd package install -S N`) and leave the rest for the next.
 */
export class StdinReader {
  #iterable: AsyncIterable<Uint8Array> | undefined;
  #iterator: AsyncIterator<Uint8Array> | undefined;
  readonly #pending: Uint8Array[] = [];
  #done = false;

  constructor(iterable?: AsyncIterable<Uint8Array>) {
    this.#iterable = iterable;
    if (iterable === undefined) this.#done = true;
  }

  static fromBytes(bytes: Uint8Array): StdinReader {
    const reader = new StdinReader();
    if (bytes.byteLength > 0) reader.#pending.push(bytes);
    return reader;
  }

  /** The next chunk, or undefined at end of input. */
  async next(): Promise<Uint8Array | undefined> {
    const pending = this.#pending.shift();
    if (pending !== undefined) return pending;
    if (this.#done) return undefined;
    if (this.#iterator === undefined) {
      if (this.#iterable === undefined) return undefined;
      this.#iterator = this.#iterable[Symbol.asyncIterator]();
    }
    for (;;) {
      const result = await this.#iterator.next();
      if (result.done === true) {
        this.#done = true;
        return undefined;
      }
      if (result.value.byteLength > 0) return result.value;
    }
  }

  /** Give bytes back so the next read returns them first. */
  unshift(bytes: Uint8Array): void {
    if (bytes.byteLength > 0) this.#pending.unshift(bytes);
  }

  /** Read exactly `count` bytes; fewer only when the input ends first. */
  async readExactly(count: number, onChunk?: (chunk: Uint8Array) => void): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let have = 0;
    while (have < count) {
      const chunk = await this.next();
      if (chunk === undefined) break;
      const want = count - have;
      if (chunk.byteLength > want) {
        chunks.push(chunk.subarray(0, want));
        this.unshift(chunk.subarray(want));
        have += want;
      } else {
        chunks.push(chunk);
        have += chunk.byteLength;
      }
      onChunk?.(chunks[chunks.length - 1] as Uint8Array);
    }
    return concatBytes(chunks, have);
  }

  /** Read everything up to end of input. */
  async readAll(): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) {
      chunks.push(chunk);
      total += chunk.byteLength;
    }
    return concatBytes(chunks, total);
  }
}

export function concatBytes(chunks: Uint8Array[], total?: number): Uint8Array {
  const size = total ?? chunks.reduce((sum, c) => sum + c.byteLength, 0);
  if (chunks.length === 1 && chunks[0]?.byteLength === size) return chunks[0];
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
