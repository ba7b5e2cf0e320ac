/**
 * The answers of the helper operations, shaped once (pure): the lease routes return them, the CLI's
 * `device` command prints them. A snapshot in `json` format carries the normalized tree.
 */

import type {
  EnsureHelperResult,
  GestureResponse,
  SnapshotJsonResponse,
  SnapshotXmlResponse,
  ViewportResponse,
} from '../api/helper-operations.ts';
import type { CaptureOptionsInput } from '../helpers/snapshot/capture-options.ts';
import type { GestureOutcome, SnapshotOutcome, ViewportOutcome } from '../helpers/snapshot/driver.ts';
import { normalizeSnapshot } from '../snapshot/normalize.ts';
import type { NormalizedSnapshot } from '../snapshot/types.ts';

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

/** A snapshot answer in `xml` format: the contract's. */
export type SnapshotXmlView = SnapshotXmlResponse;
/**
 * A snapshot answer in `json` format: the contract's, its tree as `normalizeSnapshot` made it (which
 * also holds, not enumerable, every node in order and the XML it came from).
 */
export type SnapshotJsonView = SnapshotJsonResponse & { snapshot: NormalizedSnapshot };
export type SnapshotView = SnapshotXmlView | SnapshotJsonView;

export function snapshotXmlView(s: SnapshotOutcome, capture: CaptureOptionsInput = {}): SnapshotXmlView {
  return { ...snapshotFields(s, capture), format: 'xml' as const, xml: s.xml };
}

export function snapshotJsonView(s: SnapshotOutcome, capture: CaptureOptionsInput = {}): SnapshotJsonView {
  return { ...snapshotFields(s, capture), format: 'json' as const, snapshot: normalizeSnapshot(s.xml) };
}

export function snapshotView(s: SnapshotOutcome, format: SnapshotFormat, capture: CaptureOptionsInput = {}) {
  return format === 'xml' ? snapshotXmlView(s, capture) : snapshotJsonView(s, capture);
}

/** The viewport answer: the contract's. */
export type ViewportView = ViewportResponse;

export function viewportView(v: ViewportOutcome): ViewportView {
  return {
    transport: v.transport,
    ...v.viewport,
    elapsedMs: v.elapsedMs,
    deadlineMs: v.deadlineMs,
    attempts: v.attempts,
  };
}

/** A gesture's answer: the contract's. */
export type GestureView = GestureResponse;

export function gestureView(g: GestureOutcome): GestureView {
  const { elapsedMs: helperElapsedMs, ...result } = g.result;
  return { ...result, ...served(g), helperElapsedMs: helperElapsedMs ?? null };
}

/** What ensure found and did: the contract's. */
export type EnsureView = EnsureHelperResult;

/** One line for people (the CLI's default output). */
export const describeView = {
  ensure: (r: EnsureView) =>
    `${r.packageName}: ${r.before} → ${r.action === 'none' ? 'unchanged' : r.action} (versionCode ${r.versionCode})`,
  viewport: (v: ViewportView) => `${v.width}x${v.height} at ${v.x},${v.y} (${v.transport})`,
  gesture: (g: GestureView) => `${g.kind}: ${g.injectedEvents} events (${g.transport})`,
  snapshot: (s: SnapshotView) => (s.format === 'xml' ? s.xml : JSON.stringify(s.snapshot, null, 2)),
};
