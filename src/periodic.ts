/**
 * A task run now and then again `intervalMs` after each run ends (never two runs at once), until
 * stopped; a run that resolves `true` has more work waiting and is followed at once. The timer does
 * not keep the process alive. The task handles its own errors: a rejection is swallowed here so a
 * failing pass never stops the loop nor escapes as an unhandled rejection.
 */
export class PeriodicTask {
  readonly #intervalMs: number;
  readonly #task: () => Promise<unknown>;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #run: Promise<void> | undefined;
  /** Bumped by stop(): a run of an earlier start never schedules the next one. */
  #generation = 0;

  constructor(intervalMs: number, task: () => Promise<unknown>) {
    this.#intervalMs = intervalMs;
    this.#task = task;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Start (idempotent); the first run is right away. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(0);
  }

  /** Stop; resolves once a run in progress has finished. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#generation++;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#run;
  }

  #schedule(delay: number): void {
    if (!this.#running) return;
    const generation = this.#generation;
    const next = (ms: number) => {
      this.#run = undefined;
      if (generation === this.#generation) this.#schedule(ms);
    };
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#run = this.#task().then(
        (more) => next(more === true ? 0 : this.#intervalMs),
        () => next(this.#intervalMs),
      );
    }, delay);
    this.#timer.unref?.();
  }
}
