/**
 * The glass companions of one lease (the glass contract) on the node that drives its device, started lazily
 * by the first operation that needs them:
 *
 * - the agent (`glass-agent`, kind `app-process-jar`): the latest release's jar through the artifact
 *   cache (sha256-verified), pushed and started by `GlassAgent` (clipboard, text, keys, pointer);
 * - the a11y service (`glass-a11y`, kind `accessibility-service-apk`): installed through ensure (the
 *   installArgs allowlist, sha256, signer pin, conflict policy) and enabled by `GlassA11y`, which
 *   journals the prior secure settings in the lease store before it changes anything (teardown
 *   restores them from there, on whichever node, after a crash too).
 *
 * A release whose sha256 changed since a companion started restarts it. The seed's rules for
 * actions are kept here as well as on the device: an action needs a tree served on the current
 * connection and a named window (COMPANION_REFUSED otherwise), and a device refusal of an action is
 * COMPANION_REFUSED with the device's reason. A click by coordinates (`tapPoint`) needs the same
 * served tree and takes the node's bounds from it. `close` stops both (the jar stays on the device),
 * after cancelling a finger a streamed touch (the agent's `touch` op) may have left down.
 */
import { withDeadline } from '../../adb/deadline.ts';
import type { ArtifactCache } from '../../artifacts/cache.ts';
import type { ArtifactStore } from '../../artifacts/store.ts';
import { BridgeError, isBridgeError } from '../../errors.ts';
import type { LeaseStore } from '../../leases/types.ts';
import type {
  AccessibilityServiceManifest,
  AppProcessJarManifest,
  ReleaseManifest,
} from '../../manifest/index.ts';
import type { Logger } from '../../observability/logger.ts';
import type { GlassReply } from '../../protocol/glass/line-protocol.ts';
import type { ReleaseRepository } from '../../releases/repository.ts';
import { formatNodeRef } from '../../snapshot/node-ref.ts';
import { apkSource, artifactSource } from '../apk-source.ts';
import type { HelperDevice } from '../snapshot/device.ts';
import { type EnsureResult, type EnsureVerdicts, ensureHelper } from '../snapshot/ensure-helper.ts';
import { GlassA11y, leaseSettingsJournal } from './a11y-driver.ts';
import {
  type A11yBounds,
  boundsByRef,
  type NormalizedA11yTree,
  normalizeA11yTree,
  tapPoint,
} from './a11y-tree.ts';
import { GlassAgent } from './agent-driver.ts';
import { startFailureOf } from './line-client.ts';

export const GLASS_AGENT = 'glass-agent';
/** How long close waits for the agent to cancel a finger a streamed touch left down. */
const TOUCH_RELEASE_MS = 2000;
export const GLASS_A11Y = 'glass-a11y';

/** How to publish each companion, for the NOT_FOUND message. */
const PUBLISH_HINT: Record<string, string> = {
  [GLASS_AGENT]:
    'devicebridge release publish --jar glass-agent.jar --name glass-agent --main-class <Main> --socket-name glass-agent --version <V> --store <store>',
  [GLASS_A11Y]:
    'devicebridge release publish --apk glass-a11y.apk --name glass-a11y --kind accessibility-service-apk --socket-name glass-a11y --version <V> --store <store>',
};

const KIND: Record<string, string> = {
  [GLASS_AGENT]: 'app-process-jar',
  [GLASS_A11Y]: 'accessibility-service-apk',
};

/**
 * The main classes of every published glass agent release, each once (a device may still run an
 * agent an older release started, e.g. one a dead node left). Versions that cannot be read are
 * skipped.
 */
export async function glassAgentMainClasses(
  releases: Pick<ReleaseRepository, 'listVersions' | 'getRelease'>,
): Promise<string[]> {
  const classes = new Set<string>();
  for (const version of await releases.listVersions(GLASS_AGENT)) {
    const release = await releases.getRelease(GLASS_AGENT, version).catch(() => null);
    if (release?.kind === 'app-process-jar') classes.add(release.mainClass);
  }
  return [...classes];
}

/** The latest release of a companion, of its kind; NOT_FOUND (how to publish it) when there is none. */
export async function companionRelease(
  releases: Pick<ReleaseRepository, 'getLatestRelease'>,
  name: typeof GLASS_AGENT,
): Promise<AppProcessJarManifest>;
export async function companionRelease(
  releases: Pick<ReleaseRepository, 'getLatestRelease'>,
  name: typeof GLASS_A11Y,
): Promise<AccessibilityServiceManifest>;
export async function companionRelease(
  releases: Pick<ReleaseRepository, 'getLatestRelease'>,
  name: string,
): Promise<ReleaseManifest> {
  const manifest = await releases.getLatestRelease(name);
  if (manifest === null) {
    throw new BridgeError(
      'NOT_FOUND',
      `the glass companion ${name} has no published release on this bridge; publish one: ${PUBLISH_HINT[name]}`,
      { details: { release: name } },
    );
  }
  if (manifest.kind !== KIND[name]) {
    throw new BridgeError(
      'COMPANION_UNSUPPORTED',
      `release ${name} ${manifest.version} is a ${manifest.kind ?? 'instrumentation-apk'} release, not an ${KIND[name]}; publish it with --kind ${KIND[name]}`,
      { details: { release: name, version: manifest.version, kind: manifest.kind ?? 'instrumentation-apk' } },
    );
  }
  return manifest;
}

/**
 * A start failure the device caused (exits, never listens, never binds) as COMPANION_UNSUPPORTED;
 * any other failure (a store, the adb server, a push) is passed on unchanged, retryable as it was.
 */
function unsupported(name: string, serial: string, err: unknown): unknown {
  if (!isBridgeError(err) || startFailureOf(err) === undefined) return err;
  return new BridgeError(
    'COMPANION_UNSUPPORTED',
    `${serial} cannot run the glass companion ${name}: ${err.message}`,
    { cause: err, details: { release: name, serial, ...(err.details ?? {}) } },
  );
}

function refused(reason: string, extra: Record<string, unknown> = {}): BridgeError {
  return new BridgeError('COMPANION_REFUSED', `glass-a11y refused the action: ${reason}`, {
    details: { reason, ...extra },
  });
}

/** The contract's rules before a node of the served tree is acted on: a tree, a named window, a ref in it. */
function checkServed(
  served: RunningA11y['served'],
  ref: number,
): asserts served is NonNullable<RunningA11y['served']> {
  if (served === null) {
    throw refused(
      'no tree has been served on this connection: an action needs a tree first (GET the a11y tree, then act on its refs)',
    );
  }
  if (served.package === null) {
    throw refused(
      "the served tree's window has no package name: an unnamed window cannot be confirmed to be the one the ref came from",
    );
  }
  if (ref >= served.nodeCount) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `ref ${formatNodeRef(ref)} (raw ${ref}) is not in the served tree of ${served.nodeCount} nodes`,
      {
        details: { errors: [{ path: 'ref', message: `must name one of the ${served.nodeCount} nodes` }] },
      },
    );
  }
}

export interface CompanionsOptions {
  device: HelperDevice;
  leaseId: string;
  releases: Pick<ReleaseRepository, 'getLatestRelease'>;
  store: ArtifactStore;
  cache: ArtifactCache;
  verdicts: EnsureVerdicts;
  /** Where the a11y service's prior settings are journaled (the lease store). */
  journal: Pick<LeaseStore, 'saveDeviceState'> | undefined;
  logger?: Logger;
  /** Readiness timing (tests make it short). */
  agentReadyTimeoutMs?: number;
  a11yReadyTimeoutMs?: number;
}

/** What an a11y tree request answers. */
export interface A11yTreeResult {
  /** The window the service answered from; null when the platform cannot name it. */
  package: string | null;
  /** The tree as the service sent it. */
  raw: unknown;
  tree: NormalizedA11yTree;
}

interface RunningA11y {
  a11y: GlassA11y;
  sha256: string;
  /** The tree last served on this connection: its window, size and bounds by ref (null: none yet). */
  served: { package: string | null; nodeCount: number; bounds: A11yBounds[] } | null;
}

export class LeaseCompanions {
  readonly #o: CompanionsOptions;
  #agent: { agent: GlassAgent; sha256: string } | null = null;
  #a11y: RunningA11y | null = null;
  /** One start (or restart) of a companion at a time; a11y requests one at a time (tree → action). */
  #agentChain: Promise<unknown> = Promise.resolve();
  #a11yChain: Promise<unknown> = Promise.resolve();
  #closed = false;
  #closing: Promise<{ actions: string[]; failures: string[] }> | null = null;
  /** A streamed touch may have a finger down on the device: close cancels it before the agent stops. */
  #touchDown = false;

  constructor(options: CompanionsOptions) {
    this.#o = options;
  }

  get serial(): string {
    return this.#o.device.serial;
  }

  /** One agent request (`clipboard_get`, `clipboard_set`, `text`, `key`, `pointer`, `touch`). */
  async agent(op: string, fields: Record<string, unknown> = {}): Promise<GlassReply> {
    const agent = await this.#serial('agent', () => this.#runningAgent());
    if (op !== 'touch') return agent.request(op, fields);
    const action = fields['action'];
    // A down or move may leave a finger down (even unanswered); an answered up or cancel does not.
    if (action === 'down' || action === 'move') this.#touchDown = true;
    try {
      const reply = await agent.request(op, fields);
      if (action === 'up' || action === 'cancel') this.#touchDown = false;
      return reply;
    } catch (err) {
      if (isBridgeError(err) && err.details?.['deviceError'] === 'unknown op: touch') this.#touchDown = false;
      throw err;
    }
  }

  /** The active window's tree (the service answers from the active window whatever `pkg` says). */
  tree(pkg: string): Promise<A11yTreeResult> {
    return this.#serial('a11y', async () => {
      const running = await this.#runningA11y();
      running.served = null;
      const reply = await this.#a11yRequest(running, 'tree', { package: pkg });
      const tree = normalizeA11yTree(reply['tree']);
      const served =
        typeof reply['package'] === 'string' && reply['package'] !== '' ? reply['package'] : null;
      // The connection that served it (the request may have re-established it).
      const current = this.#a11y ?? running;
      current.served = { package: served, nodeCount: tree.nodeCount, bounds: boundsByRef(tree) };
      return { package: served, raw: reply['tree'], tree };
    });
  }

  /**
   * Where a click by coordinates on `ref` of the served tree lands: the centre of the node's bounds
   * within the served window. The same refusals as an action (no tree, an unnamed window, a ref
   * outside the tree); INVALID_ARGUMENT when no part of the node is on screen.
   */
  tapPoint(ref: number): Promise<{ x: number; y: number }> {
    return this.#serial('a11y', async () => {
      const served = this.#a11y?.served ?? null;
      checkServed(served, ref);
      const node = served.bounds[ref] as A11yBounds;
      const point = tapPoint(node, served.bounds[0] as A11yBounds);
      if (point === null) {
        const { x, y, width, height } = node;
        throw new BridgeError(
          'INVALID_ARGUMENT',
          `ref ${formatNodeRef(ref)} (raw ${ref}) has empty bounds on screen (x ${x}, y ${y}, ${width}×${height}): nothing to tap; pass "via": "accessibility" to send ACTION_CLICK instead`,
          { details: { errors: [{ path: 'ref', message: 'has empty bounds on screen' }] } },
        );
      }
      return point;
    });
  }

  /** `set_text` (with `text`) or `click` (ACTION_CLICK) on a node of the tree served on this connection. */
  action(ref: number, action: 'set_text' | 'click', text?: string): Promise<void> {
    return this.#serial('a11y', async () => {
      // Refused before anything starts: no service is installed or enabled for an action without a tree.
      if (!this.#a11y?.served) checkServed(null, ref);
      const running = await this.#runningA11y();
      const served = running.served;
      checkServed(served, ref);
      try {
        await this.#a11yRequest(running, 'action', {
          ref,
          action,
          ...(action === 'set_text' ? { text: text ?? '' } : {}),
        });
      } catch (err) {
        if (
          isBridgeError(err) &&
          err.code === 'HELPER_FAILED' &&
          typeof err.details?.['deviceError'] === 'string'
        ) {
          throw refused(err.details['deviceError'], { package: served.package });
        }
        throw err;
      }
    });
  }

  /**
   * Install the a11y service's APK when it is missing or outdated (ensure: the installArgs
   * allowlist, sha256, signer pin), without enabling the service.
   */
  async ensureA11yApk(): Promise<EnsureResult> {
    this.#refuseClosed();
    return this.#ensureA11yApk(await companionRelease(this.#o.releases, GLASS_A11Y));
  }

  #ensureA11yApk(manifest: AccessibilityServiceManifest): Promise<EnsureResult> {
    const { device, cache, store, verdicts } = this.#o;
    return ensureHelper(device, manifest, verdicts, { apk: apkSource(cache, store, manifest) });
  }

  /**
   * Stop both companions (connections, the agent process, their forwards); the jar stays. Requests
   * in flight fail at once (their connections close); a start in progress is waited for and what it
   * started is stopped too. Idempotent: every call answers the one record.
   */
  close(): Promise<{ actions: string[]; failures: string[] }> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<{ actions: string[]; failures: string[] }> {
    this.#closed = true;
    const record = { actions: [] as string[], failures: [] as string[] };
    await this.#releaseTouch(record);
    await this.#stop(record);
    await Promise.allSettled([this.#agentChain, this.#a11yChain]);
    await this.#stop(record);
    return record;
  }

  /**
   * A finger a streamed touch left down is cancelled through the agent before it is stopped: the
   * agent cancels it itself when its connection ends, but stopping it right after could come first.
   * Bounded (TOUCH_RELEASE_MS): a device that does not answer is stopped anyway.
   */
  async #releaseTouch(record: { actions: string[]; failures: string[] }): Promise<void> {
    const running = this.#agent;
    // A connection that ended took the finger with it (the agent cancels it): nothing to reconnect for.
    if (!this.#touchDown || running === null || !running.agent.connected) return;
    this.#touchDown = false;
    try {
      await withDeadline(
        running.agent.request('touch', { action: 'cancel' }),
        { timeoutMs: TOUCH_RELEASE_MS },
        'the glass agent',
      );
      record.actions.push(`released the touch left down on ${this.serial}`);
    } catch (err) {
      record.failures.push(`releasing the touch left down on ${this.serial}: ${(err as Error).message}`);
    }
  }

  async #stop(record: { actions: string[]; failures: string[] }): Promise<void> {
    const serial = this.serial;
    if (this.#agent) {
      const { agent } = this.#agent;
      this.#agent = null;
      try {
        await agent.close();
        record.actions.push(`stopped glass agent on ${serial}`);
      } catch (err) {
        record.failures.push(`stopping glass agent on ${serial}: ${(err as Error).message}`);
      }
    }
    if (this.#a11y) {
      const { a11y } = this.#a11y;
      this.#a11y = null;
      try {
        await a11y.close();
        record.actions.push(`closed glass a11y connection on ${serial}`);
      } catch (err) {
        record.failures.push(`closing glass a11y connection on ${serial}: ${(err as Error).message}`);
      }
    }
  }

  #serial<T>(which: 'agent' | 'a11y', fn: () => Promise<T>): Promise<T> {
    const chain = which === 'agent' ? this.#agentChain : this.#a11yChain;
    const next = chain.then(fn, fn);
    const settled = next.catch(() => undefined);
    if (which === 'agent') this.#agentChain = settled;
    else this.#a11yChain = settled;
    return next;
  }

  #refuseClosed(): void {
    if (this.#closed) throw new BridgeError('LEASE_EXPIRED', `lease ${this.#o.leaseId} has ended`);
  }

  async #runningAgent(): Promise<GlassAgent> {
    this.#refuseClosed();
    const manifest = await companionRelease(this.#o.releases, GLASS_AGENT);
    if (this.#agent && this.#agent.sha256 === manifest.sha256) return this.#agent.agent;
    if (this.#agent) {
      this.#o.logger?.info({ serial: this.serial }, 'glass agent release changed; restarting the agent');
      const old = this.#agent.agent;
      this.#agent = null;
      await old.close();
    }
    const jarPath = await artifactSource(this.#o.cache, this.#o.store, manifest)();
    let started: GlassAgent;
    try {
      started = (
        await GlassAgent.start({
          device: this.#o.device,
          manifest,
          jarPath,
          owner: this.#o.leaseId,
          ...(this.#o.logger ? { logger: this.#o.logger } : {}),
          ...(this.#o.agentReadyTimeoutMs === undefined
            ? {}
            : { readyTimeoutMs: this.#o.agentReadyTimeoutMs }),
        })
      ).agent;
    } catch (err) {
      throw unsupported(GLASS_AGENT, this.serial, err);
    }
    this.#agent = { agent: started, sha256: manifest.sha256 };
    this.#refuseClosed();
    return started;
  }

  async #runningA11y(): Promise<RunningA11y> {
    this.#refuseClosed();
    const manifest = await companionRelease(this.#o.releases, GLASS_A11Y);
    if (this.#a11y && this.#a11y.sha256 === manifest.sha256) return this.#a11y;
    if (this.#a11y) {
      const old = this.#a11y.a11y;
      this.#a11y = null;
      await old.close();
    }
    const journal = this.#o.journal;
    if (journal === undefined) {
      throw new BridgeError(
        'UNAVAILABLE',
        'this node has no device-state journal: the a11y service is not enabled without a way to restore the settings',
      );
    }
    await this.#ensureA11yApk(manifest);
    const { device } = this.#o;
    let a11y: GlassA11y;
    try {
      a11y = (
        await GlassA11y.enable({
          device,
          manifest,
          owner: this.#o.leaseId,
          journal: leaseSettingsJournal(journal, this.#o.leaseId),
          ...(this.#o.a11yReadyTimeoutMs === undefined ? {} : { readyTimeoutMs: this.#o.a11yReadyTimeoutMs }),
        })
      ).a11y;
    } catch (err) {
      throw unsupported(GLASS_A11Y, this.serial, err);
    }
    this.#a11y = { a11y, sha256: manifest.sha256, served: null };
    this.#refuseClosed();
    return this.#a11y;
  }

  /**
   * A request on the service's connection. A connection that is gone is re-established (enabled
   * again: the journal keeps the first prior values) and the request refused or retried: a tree is
   * asked again, an action is refused (its tree was served on the old connection).
   */
  async #a11yRequest(running: RunningA11y, op: 'tree' | 'action', fields: Record<string, unknown>) {
    try {
      return await running.a11y.request(op, fields);
    } catch (err) {
      if (!isBridgeError(err) || (err.code !== 'UNAVAILABLE' && err.code !== 'HELPER_PROTOCOL_ERROR'))
        throw err;
      if (this.#a11y === running) {
        this.#a11y = null;
        await running.a11y.close();
      }
      const again = await this.#runningA11y();
      if (op === 'action') {
        throw refused(
          'the connection to the service was re-established since the tree was served: get the tree again',
        );
      }
      return again.a11y.request(op, fields);
    }
  }
}
