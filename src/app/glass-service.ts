/**
 * Lease-scoped glass companion operations (the glass contract): the use cases the glass routes call with a
 * scope `LeaseScopes.open` resolved (owner-aware like the snapshot's: a device driven elsewhere is
 * forwarded by the HTTP edge). The agent serves the clipboard, text, key chords and pointer
 * gestures; the a11y service the tree and `set_text` / `click` on its nodes (a click is a tap on
 * the node's bounds unless ACTION_CLICK is asked for). The companions start
 * lazily per lease on the node that drives the device, and its teardown stops them.
 */
import type {
  A11yActionResult,
  A11yClickVia,
  A11yTree,
  Clipboard,
  GlassDone,
  PointerPoint,
} from '../api/index.ts';
import { parseA11yRef } from '../helpers/glass/a11y-tree.ts';
import type { LeaseRoom, LeaseScope, LeaseScopes } from '../lease-session/index.ts';
import { buildTap } from '../protocol/helper/touch-plan.ts';
import { formatNodeRef } from '../snapshot/node-ref.ts';

export interface GlassServiceOptions {
  scopes: LeaseScopes;
  room: Pick<LeaseRoom, 'glass' | 'snapshot'>;
}

const since = (started: number) => Math.round((performance.now() - started) * 100) / 100;

export class GlassService {
  readonly #o: GlassServiceOptions;

  constructor(options: GlassServiceOptions) {
    this.#o = options;
  }

  async #agent(scope: LeaseScope, op: string, fields: Record<string, unknown> = {}) {
    return this.#o.room.glass.agent(this.#o.scopes.local(scope), op, fields);
  }

  async #done(scope: LeaseScope, op: string, fields: Record<string, unknown>): Promise<GlassDone> {
    const started = performance.now();
    await this.#agent(scope, op, fields);
    return { ok: true, elapsedMs: since(started) };
  }

  async clipboardGet(scope: LeaseScope): Promise<Clipboard> {
    const reply = await this.#agent(scope, 'clipboard_get');
    return { text: typeof reply['text'] === 'string' ? reply['text'] : '' };
  }

  clipboardSet(scope: LeaseScope, text: string): Promise<GlassDone> {
    return this.#done(scope, 'clipboard_set', { text });
  }

  /** Text typed into the focused field (faithful Unicode, unlike `adb shell input`). */
  text(scope: LeaseScope, text: string): Promise<GlassDone> {
    return this.#done(scope, 'text', { text });
  }

  /** A key chord (validated by the contract with `parseKeyChord`). */
  key(scope: LeaseScope, chord: string): Promise<GlassDone> {
    return this.#done(scope, 'key', { chord });
  }

  pointer(scope: LeaseScope, gesture: PointerPoint[], button?: number): Promise<GlassDone> {
    return this.#done(scope, 'pointer', { gesture, ...(button === undefined ? {} : { button }) });
  }

  async a11yTree(
    scope: LeaseScope,
    request: { format?: 'normalized' | 'raw'; package?: string } = {},
  ): Promise<A11yTree> {
    const started = performance.now();
    const served = await this.#o.room.glass.a11yTree(this.#o.scopes.local(scope), request.package ?? '');
    if (request.format === 'raw') {
      return {
        format: 'raw',
        package: served.package,
        tree: served.raw as Record<string, unknown>,
        elapsedMs: since(started),
      };
    }
    return {
      format: 'normalized',
      package: served.package,
      nodeCount: served.tree.nodeCount,
      root: served.tree.root,
      elapsedMs: since(started),
    };
  }

  /**
   * `set_text`, or `click`: by default a tap at the centre of the node's bounds on screen (through
   * the snapshot helper's gesture, as every tap of the bridge), because ACTION_CLICK answers success
   * and does nothing on Compose (the glass contract's scope note); ACTION_CLICK only with `via: 'accessibility'`.
   */
  async a11yAction(
    scope: LeaseScope,
    request: { ref: string | number; action: 'set_text' | 'click'; text?: string; via?: A11yClickVia },
  ): Promise<A11yActionResult> {
    const started = performance.now();
    const rawRef = parseA11yRef(request.ref);
    const lease = this.#o.scopes.local(scope);
    const done = { ok: true as const, ref: formatNodeRef(rawRef), rawRef, action: request.action };
    if (request.action === 'click' && request.via !== 'accessibility') {
      const point = await this.#o.room.glass.a11yTapPoint(lease, rawRef);
      await this.#o.room.snapshot.gesture(lease, buildTap(point.x, point.y), {});
      return { ...done, via: 'tap', point, elapsedMs: since(started) };
    }
    await this.#o.room.glass.a11yAction(lease, rawRef, request.action, request.text);
    return {
      ...done,
      ...(request.action === 'click' ? { via: 'accessibility' as const } : {}),
      elapsedMs: since(started),
    };
  }
}
