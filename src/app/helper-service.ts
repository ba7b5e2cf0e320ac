/**
 * Lease-scoped helper operations (ensure, snapshot, viewport, gestures, screenshot): the use cases the lease
 * routes call with a scope `LeaseScopes.open` resolved (one lease read, tenancy and fencing checked,
 * owner resolved). A scope whose device is driven elsewhere is forwarded by the HTTP edge before it
 * gets here; what reaches a method runs on this node or is refused naming the owner.
 */
import type { CaptureOptionsInput } from '../helpers/snapshot/capture-options.ts';
import type { Transport } from '../helpers/snapshot/driver.ts';
import type { EnsurePolicy, EnsureResult } from '../helpers/snapshot/ensure-helper.ts';
import type { LeaseRoom, LeaseScope, LeaseScopes, Screenshot } from '../lease-session/index.ts';
import type { Metrics } from '../observability/metrics.ts';
import { type GestureSpec, planForGesture } from '../protocol/helper/gestures.ts';
import {
  type GestureView,
  gestureView,
  type SnapshotFormat,
  type SnapshotJsonView,
  type SnapshotXmlView,
  snapshotView,
  type ViewportView,
  viewportView,
} from './helper-views.ts';

export interface HelperRequest {
  transport?: Transport;
  deadlineMs?: number;
}

export interface SnapshotRequest extends HelperRequest {
  format: SnapshotFormat;
  capture?: CaptureOptionsInput;
}

export interface HelperServiceOptions {
  scopes: LeaseScopes;
  room: Pick<LeaseRoom, 'snapshot'>;
  metrics?: Pick<Metrics, 'snapshotSeconds' | 'helperInstalls'>;
}

const request = (r: HelperRequest) => ({
  transport: r.transport ?? 'auto',
  ...(r.deadlineMs === undefined ? {} : { deadlineMs: r.deadlineMs }),
});

export class HelperService {
  readonly #o: HelperServiceOptions;

  constructor(options: HelperServiceOptions) {
    this.#o = options;
  }

  async ensure(scope: LeaseScope, name: string, policy?: EnsurePolicy): Promise<EnsureResult> {
    const result = await this.#o.room.snapshot.ensure(this.#o.scopes.local(scope), name, policy);
    this.#o.metrics?.helperInstalls.inc({
      outcome: result.action === 'none' ? result.before : result.action,
    });
    return result;
  }

  snapshot(scope: LeaseScope, r: SnapshotRequest & { format: 'xml' }): Promise<SnapshotXmlView>;
  snapshot(scope: LeaseScope, r: SnapshotRequest & { format: 'json' }): Promise<SnapshotJsonView>;
  snapshot(scope: LeaseScope, r: SnapshotRequest): Promise<SnapshotXmlView | SnapshotJsonView>;
  async snapshot(scope: LeaseScope, r: SnapshotRequest): Promise<SnapshotXmlView | SnapshotJsonView> {
    const capture = r.capture ?? {};
    const s = await this.#o.room.snapshot.snapshot(this.#o.scopes.local(scope), { ...request(r), capture });
    this.#o.metrics?.snapshotSeconds.observe({ transport: s.transport }, s.elapsedMs / 1000);
    return snapshotView(s, r.format, capture);
  }

  async viewport(scope: LeaseScope, r: HelperRequest = {}): Promise<ViewportView> {
    return viewportView(await this.#o.room.snapshot.viewport(this.#o.scopes.local(scope), request(r)));
  }

  /** The leased device's screen as PNG. */
  screenshot(scope: LeaseScope, r: { deadlineMs?: number } = {}): Promise<Screenshot> {
    return this.#o.room.snapshot.screenshot(this.#o.scopes.local(scope), r);
  }

  /** A gesture by kind (tap, swipe, …) or a raw `android-touch-plan-v1` plan (`{kind: 'plan', plan}`). */
  async gesture(scope: LeaseScope, spec: GestureSpec, r: HelperRequest = {}): Promise<GestureView> {
    const plan = planForGesture(spec);
    return gestureView(await this.#o.room.snapshot.gesture(this.#o.scopes.local(scope), plan, request(r)));
  }
}
