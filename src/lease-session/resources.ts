/**
 * What a lease opened on its device, as a list: each capability registers what it opens (the
 * snapshot helper's driver and session, the glass companions, the adb endpoint) with the function
 * that closes it. Teardown closes them in reverse order of opening, each close bounded, its outcome
 * recorded as lines of the teardown record; a close that fails or hangs is recorded and the next one
 * runs all the same.
 */

/** A teardown record's lines (or a part of them). */
export interface Closed {
  actions: string[];
  failures: string[];
}

/**
 * Close one resource; `waitMs` is how long it may wait for its own work (requests still running).
 * It answers its own record lines; a close that throws is recorded as `closing <what>: <message>`.
 */
export type CloseResource = (waitMs: number) => Promise<Partial<Closed> | undefined>;

/** How long a close may take beyond its `waitMs` before it is abandoned and recorded as a failure. */
export const CLOSE_GRACE_MS = 5000;

interface Entry {
  readonly what: string;
  readonly close: CloseResource;
  /** A helper's (closed by the doctor's stop too); the rest only by teardown. */
  readonly helper: boolean;
}

export class Resources {
  readonly #entries: Entry[] = [];

  get size(): number {
    return this.#entries.length;
  }

  /** Whether `what` is on the list. */
  has(what: string): boolean {
    return this.#entries.some((e) => e.what === what);
  }

  /**
   * Register what was just opened. Returns `forget`: takes it off the list without closing it (the
   * capability closed it itself, e.g. a driver replaced by a newer release's).
   */
  add(what: string, close: CloseResource, options: { helper?: boolean } = {}): () => void {
    const entry: Entry = { what, close, helper: options.helper === true };
    this.#entries.push(entry);
    return () => {
      const at = this.#entries.indexOf(entry);
      if (at !== -1) this.#entries.splice(at, 1);
    };
  }

  /**
   * Close (and take off the list) every resource, or only the helpers', last opened first. Each
   * close gets `waitMs` for its own work and is abandoned `CLOSE_GRACE_MS` later; its lines, or the
   * failure, go to `record`.
   */
  async close(waitMs: number, record: Closed, which: 'all' | 'helpers' = 'all'): Promise<void> {
    const taken = this.#entries.filter((e) => which === 'all' || e.helper);
    for (const entry of taken) this.#entries.splice(this.#entries.indexOf(entry), 1);
    for (const entry of taken.reverse()) await closeOne(entry, waitMs, record);
  }
}

async function closeOne(entry: Entry, waitMs: number, record: Closed): Promise<void> {
  const boundMs = waitMs + CLOSE_GRACE_MS;
  let timer: NodeJS.Timeout | undefined;
  const abandoned = new Promise<'abandoned'>((resolve) => {
    timer = setTimeout(() => resolve('abandoned'), boundMs);
  });
  try {
    const closed = await Promise.race([Promise.resolve().then(() => entry.close(waitMs)), abandoned]);
    if (closed === 'abandoned') {
      record.failures.push(`closing ${entry.what}: still closing after ${boundMs} ms`);
      return;
    }
    record.actions.push(...(closed?.actions ?? []));
    record.failures.push(...(closed?.failures ?? []));
  } catch (err) {
    record.failures.push(`closing ${entry.what}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}
