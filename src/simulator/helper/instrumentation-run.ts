/**
 * One running instrumentation inside a simulated device, and the per-device registry that
 * `am force-stop PKG` (and a new `am instrument` of the same package) uses to kill it.
 */
import type { SimDevice } from '../types.ts';
import { PROCESS_CRASHED } from './am-output.ts';

export type StopReason = 'force-stop' | 'abort';

export class InstrumentationRun {
  readonly packageName: string;
  /** Resolves when the run ends: finished normally, force-stopped, or aborted. */
  readonly stopped: Promise<StopReason | 'finished'>;
  #write: (text: string | Uint8Array) => void;
  #finished = false;
  #resolveStop!: (reason: StopReason | 'finished') => void;

  constructor(packageName: string, write: (text: string | Uint8Array) => void) {
    this.packageName = packageName;
    this.#write = write;
    this.stopped = new Promise((resolve) => {
      this.#resolveStop = resolve;
    });
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** Output while the instrumentation runs; dropped once it finished or was killed. */
  write(text: string | Uint8Array): void {
    if (!this.#finished) this.#write(text);
  }

  /** The instrumentation's last words (its INSTRUMENTATION_RESULT block). */
  finish(text: string): void {
    if (this.#finished) return;
    this.#write(text);
    this.#finished = true;
    this.#resolveStop('finished');
  }

  /** Kill the process: `am` reports a crash for a force-stop; an aborted `am` prints nothing more. */
  stop(reason: StopReason): void {
    if (this.#finished) return;
    if (reason === 'force-stop') this.#write(PROCESS_CRASHED);
    this.#finished = true;
    this.#resolveStop(reason);
  }
}

const running = new WeakMap<SimDevice, Set<InstrumentationRun>>();

export function registerRun(device: SimDevice, run: InstrumentationRun): () => void {
  let set = running.get(device);
  if (set === undefined) {
    set = new Set();
    running.set(device, set);
  }
  set.add(run);
  const owner = set;
  return () => {
    owner.delete(run);
  };
}

/** `am force-stop PKG`: kill every running instrumentation of that package on the device. */
export function forceStop(device: SimDevice, packageName: string): void {
  for (const run of [...(running.get(device) ?? [])]) {
    if (run.packageName === packageName) run.stop('force-stop');
  }
}

/** Kill every running instrumentation on the device (device shutdown). */
export function stopAllHelpers(device: SimDevice): void {
  for (const run of [...(running.get(device) ?? [])]) run.stop('force-stop');
}

/** Number of instrumentations running on the device (tests, diagnostics). */
export function runningHelperCount(device: SimDevice, packageName?: string): number {
  let count = 0;
  for (const run of running.get(device) ?? []) {
    if (packageName === undefined || run.packageName === packageName) count += 1;
  }
  return count;
}
