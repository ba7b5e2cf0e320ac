/**
 * The answers of the helper operations, shaped once (pure): the lease routes return them, the CLI's
 * `device` command prints them. A snapshot in `json` format carries the normalized tree.
 */

import type { CaptureOptionsInput } from '../helpers/snapshot/capture-options.ts';
import type { GestureOutcome, SnapshotOutcome, ViewportOutcome } from '../helpers/snapshot/driver.ts';
import type { EnsureResult } from '../helpers/snapshot/ensure-helper.ts';
import { normalizeSnapshot } from '../snapshot/normalize.ts';

export type SnapshotFormat = 'json' | 'xml';

function served(s: SnapshotOutcome | ViewportOutcome | GestureOutcome) {
  return { transport: s.transport, elapsedMs: s.elapsedMs, deadlineMs: s.deadlineMs, attempts: s.attempts };
}

/** The fields every snapshot answer has, whatever its format. */
export function snapshotFields(s: SnapshotOutcome, capture: CaptureOptionsInput = {}) {
  return {
    transport: s.transport,
    ...(s.fallback ? { fallback: s.fallback } : {}),
    elapsedMs: s.elapsedMs,
    deadlineMs: s.deadlineMs,
    attempts: s.attempts,
    helperElapsedMs: s.result.elapsedMs ?? null,
    waitForIdleTimeoutMs: s.result.waitForIdleTimeoutMs ?? capture.waitForIdleTimeoutMs ?? null,
    nodeCount: s.result.nodeCount ?? null,
    truncated: s.result.truncated ?? null,
    windowCount: s.result.windowCount ?? null,
    captureMode: s.result.captureMode ?? null,
  };
}

export function snapshotXmlView(s: SnapshotOutcome, capture: CaptureOptionsInput = {}) {
  return { ...snapshotFields(s, capture), format: 'xml' as const, xml: s.xml };
}

export function snapshotJsonView(s: SnapshotOutcome, capture: CaptureOptionsInput = {}) {
  return { ...snapshotFields(s, capture), format: 'json' as const, snapshot: normalizeSnapshot(s.xml) };
}

export type SnapshotXmlView = ReturnType<typeof snapshotXmlView>;
export type SnapshotJsonView = ReturnType<typeof snapshotJsonView>;
export type SnapshotView = SnapshotXmlView | SnapshotJsonView;

export function snapshotView(s: SnapshotOutcome, format: SnapshotFormat, capture: CaptureOptionsInput = {}) {
  return format === 'xml' ? snapshotXmlView(s, capture) : snapshotJsonView(s, capture);
}

export function viewportView(v: ViewportOutcome) {
  return {
    transport: v.transport,
    ...v.viewport,
    elapsedMs: v.elapsedMs,
    deadlineMs: v.deadlineMs,
    attempts: v.attempts,
  };
}
export type ViewportView = ReturnType<typeof viewportView>;

export function gestureView(g: GestureOutcome) {
  const { elapsedMs: helperElapsedMs, ...result } = g.result;
  return { ...result, ...served(g), helperElapsedMs: helperElapsedMs ?? null };
}
export type GestureView = ReturnType<typeof gestureView>;

export type EnsureView = EnsureResult;

/** One line for people (the CLI's default output). */
export const describeView = {
  ensure: (r: EnsureResult) =>
    `${r.packageName}: ${r.before} → ${r.action === 'none' ? 'unchanged' : r.action} (versionCode ${r.versionCode})`,
  viewport: (v: ViewportView) => `${v.width}x${v.height} at ${v.x},${v.y} (${v.transport})`,
  gesture: (g: GestureView) => `${g.kind}: ${g.injectedEvents} events (${g.transport})`,
  snapshot: (s: SnapshotView) => (s.format === 'xml' ? s.xml : JSON.stringify(s.snapshot, null, 2)),
};
