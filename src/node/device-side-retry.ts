/**
 * Starting the device side again after it failed to start. A fleet comes up all at once (containers
 * start in order, not when the one before answers): a bridge that finds its Redis or its adb server
 * not answering yet must drive its devices as soon as they answer, not serve manifests only for the
 * rest of its life. Until then the node is not ready (its readiness names the device side and why)
 * and the device routes answer UNAVAILABLE, which clients retry.
 *
 * Attempts back off from 1 s, doubling, to 30 s. Refused input (a devices file, simulated devices)
 * is not retried: the start fails on it before any of this.
 */
import type { Logger } from '../observability/logger.ts';

export const DEVICE_SIDE_RETRY_FIRST_MS = 1000;
export const DEVICE_SIDE_RETRY_MAX_MS = 30_000;

export interface DeviceSideRetryOptions<T> {
  /** One attempt (stops what it started when it fails). */
  start: () => Promise<T>;
  /** The started side, handed over; not called once stop() began. */
  started: (side: T) => Promise<void> | void;
  /** Stops a side that started while stop() was under way. */
  discard: (side: T) => Promise<void>;
  /** The latest failure, for readiness and the start line. */
  failed: (message: string) => void;
  logger: Logger;
  /** Delays (tests). */
  firstMs?: number;
  maxMs?: number;
}

export class DeviceSideRetry<T> {
  readonly #options: DeviceSideRetryOptions<T>;
  #delayMs: number;
  #attempts = 0;
  #timer: NodeJS.Timeout | undefined;
  #attempt: Promise<void> | undefined;
  #stopped = false;

  constructor(options: DeviceSideRetryOptions<T>) {
    this.#options = options;
    this.#delayMs = options.firstMs ?? DEVICE_SIDE_RETRY_FIRST_MS;
  }

  /** The delay before the next attempt (what the first failure's log line names). */
  get nextDelayMs(): number {
    return this.#delayMs;
  }

  /** Schedule the next attempt. */
  schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#attempt = this.#run().finally(() => {
        this.#attempt = undefined;
      });
    }, this.#delayMs);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    this.#attempts++;
    let side: T;
    try {
      side = await this.#options.start();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.#options.failed(message);
      this.#delayMs = Math.min(this.#delayMs * 2, this.#options.maxMs ?? DEVICE_SIDE_RETRY_MAX_MS);
      this.#options.logger.warn(
        { err: message, attempt: this.#attempts, retryInMs: this.#delayMs },
        'device side still unavailable; trying again',
      );
      this.schedule();
      return;
    }
    if (this.#stopped) {
      await this.#options.discard(side);
      return;
    }
    await this.#options.started(side);
    this.#options.logger.info({ attempt: this.#attempts }, 'device side started');
  }

  /** No more attempts; resolves once an attempt under way has ended (its side stopped). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#attempt;
  }
}
