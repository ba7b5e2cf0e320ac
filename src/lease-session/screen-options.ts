/**
 * What the live screen (screen.ts) is given through the lease-session options: how a lease device's
 * stream is opened, and its limits.
 */
import type { ScreenSource, ScreenStreamOptions } from '../helpers/screen/source.ts';
import type { LeaseTarget } from './scope.ts';

/** Opens the device stream of a lease's device; `signal` aborts the opening (and the stream). */
export type OpenScreenSource = (
  target: LeaseTarget,
  options: ScreenStreamOptions,
  signal: AbortSignal,
) => Promise<ScreenSource>;

export interface ScreenLimits {
  /** Viewers per lease (default 4); one more is refused with RATE_LIMITED (429). */
  maxViewers: number;
  /** Bytes one viewer's queue may hold before it skips to the next key frame (default 4 MiB). */
  queueBytes: number;
  /** How long the device stream runs on after its last viewer left (default 2 s). */
  lingerMs: number;
}

export const SCREEN_LIMITS: ScreenLimits = { maxViewers: 4, queueBytes: 4 * 1024 * 1024, lingerMs: 2000 };
