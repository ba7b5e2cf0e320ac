/**
 * The lease's glass companions (the agent, the a11y service; `helpers/glass/companions.ts`): started
 * by the first operation that needs one, a resource of the lease's session that teardown closes;
 * teardown's journal restore puts back the secure settings the a11y service changed.
 */
import { ACCESSIBILITY_ENABLED, ENABLED_SERVICES, readSecureSetting } from '../helpers/glass/a11y-driver.ts';
import { LeaseCompanions } from '../helpers/glass/companions.ts';
import type { LeaseTarget } from './scope.ts';
import { type LeaseSession, type LeaseSessions, leaseEnded } from './session.ts';

export class GlassCapability {
  readonly #sessions: LeaseSessions;

  constructor(sessions: LeaseSessions) {
    this.#sessions = sessions;
  }

  #companions(lease: LeaseTarget, session: LeaseSession): LeaseCompanions {
    if (session.ending) throw leaseEnded(lease.id);
    if (session.companions) return session.companions;
    const o = this.#sessions.options;
    const companions = new LeaseCompanions({
      device: this.#sessions.device(lease.serial),
      leaseId: lease.id,
      releases: o.releases,
      store: o.store,
      cache: o.cache,
      verdicts: this.#sessions.verdicts,
      journal: o.journal,
      ...(o.logger ? { logger: o.logger } : {}),
      ...o.glass,
    });
    // Teardown cancels the lease's operations: companion requests in flight fail at once.
    session.controller.signal.addEventListener('abort', () => void companions.close(), { once: true });
    session.companions = companions;
    session.resources.add(
      'glass companions',
      () => {
        if (session.companions === companions) session.companions = null;
        return companions.close();
      },
      { helper: true },
    );
    return companions;
  }

  /** One request to the lease's glass agent (started on first use): clipboard, text, key, pointer. */
  agent(lease: LeaseTarget, op: string, fields: Record<string, unknown> = {}) {
    return this.#sessions.operate(lease, (session) => this.#companions(lease, session).agent(op, fields));
  }

  /** The secure settings the glass a11y service changes, as the lease's device has them now. */
  a11ySettings(lease: LeaseTarget): Promise<[services: string | null, enabled: string | null]> {
    return this.#sessions.operate(lease, async () => {
      const device = this.#sessions.device(lease.serial);
      return [
        await readSecureSetting(device, ENABLED_SERVICES),
        await readSecureSetting(device, ACCESSIBILITY_ENABLED),
      ];
    });
  }

  /** Install the glass a11y service's APK when missing or outdated, without enabling the service. */
  ensureA11yApk(lease: LeaseTarget) {
    return this.#sessions.operate(lease, (session) => this.#companions(lease, session).ensureA11yApk());
  }

  /** The accessibility tree through the lease's glass a11y service (installed and enabled on first use). */
  a11yTree(lease: LeaseTarget, pkg: string) {
    return this.#sessions.operate(lease, (session) => this.#companions(lease, session).tree(pkg));
  }

  /** Where a click by coordinates on a node of the tree last served to this lease lands. */
  a11yTapPoint(lease: LeaseTarget, ref: number) {
    return this.#sessions.operate(lease, (session) => this.#companions(lease, session).tapPoint(ref));
  }

  /** `set_text` or `click` (ACTION_CLICK) on a node of the tree last served to this lease. */
  a11yAction(lease: LeaseTarget, ref: number, action: 'set_text' | 'click', text?: string) {
    return this.#sessions.operate(lease, (session) =>
      this.#companions(lease, session).action(ref, action, text),
    );
  }
}
