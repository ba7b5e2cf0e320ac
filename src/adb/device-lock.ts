/**
 * Per-device serialisation: mutating operations (install, uninstall, settings) run one at a time
 * per device; reads run concurrently but never during a mutation. Writers are not starved: a
 * waiting writer holds back new readers. Process-local (one bridge node owns a device).
 */
interface State {
  readers: number;
  writer: boolean;
  queue: Array<{ write: boolean; wake: () => void }>;
}

export class DeviceLocks {
  readonly #states = new Map<string, State>();

  #state(key: string): State {
    let s = this.#states.get(key);
    if (!s) {
      s = { readers: 0, writer: false, queue: [] };
      this.#states.set(key, s);
    }
    return s;
  }

  #pump(key: string, s: State): void {
    while (s.queue.length > 0) {
      const next = s.queue[0]!;
      if (next.write) {
        if (s.writer || s.readers > 0) return;
        s.queue.shift();
        s.writer = true;
        next.wake();
        return;
      }
      if (s.writer) return;
      s.queue.shift();
      s.readers += 1;
      next.wake();
    }
    if (!s.writer && s.readers === 0) this.#states.delete(key);
  }

  async #run<T>(key: string, write: boolean, fn: () => Promise<T>): Promise<T> {
    const s = this.#state(key);
    await new Promise<void>((wake) => {
      s.queue.push({ write, wake });
      this.#pump(key, s);
    });
    try {
      return await fn();
    } finally {
      if (write) s.writer = false;
      else s.readers -= 1;
      this.#pump(key, s);
    }
  }

  withRead<T>(serial: string, fn: () => Promise<T>): Promise<T> {
    return this.#run(serial, false, fn);
  }

  withWrite<T>(serial: string, fn: () => Promise<T>): Promise<T> {
    return this.#run(serial, true, fn);
  }
}
