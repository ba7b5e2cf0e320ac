/**
 * The doctor: every capability of a leased device checked in order, the way glass-mcp's
 * `doctor --deep` does, through the same use cases the lease routes call (ensure, viewport,
 * snapshot one-shot and session, gesture, the glass agent, the a11y service), so what passes here
 * works for a client. It launches the glass a11y APK's self-test activity (one EditText) to type
 * into and read back, and puts the device back as it found it: the clipboard (the clipboard check
 * restores the user's clip), the snapshot helper's session and the glass companions stopped and
 * the a11y service's secure settings restored through the lease's journal (the same closes and
 * restore as teardown), the self-test activity stopped. A check that needs one that did not pass is skipped, naming it. The run is
 * bounded: checks get what is left of `timeoutSeconds` minus a reserve for putting the device back.
 */

import { withDeadline } from '../adb/deadline.ts';
import {
  DOCTOR_CHECK_IDS,
  DOCTOR_DEFAULT_SECONDS,
  type DoctorCheck,
  type DoctorCheckId,
  type DoctorReport,
} from '../api/doctor.ts';
import type { A11yNode } from '../api/glass.ts';
import { BridgeError } from '../errors.ts';
import { ACCESSIBILITY_ENABLED, ENABLED_SERVICES } from '../helpers/glass/a11y-driver.ts';
import { GLASS_A11Y, GLASS_AGENT } from '../helpers/glass/companions.ts';
import {
  type LeaseRoom,
  type LeaseScope,
  type LeaseScopes,
  SNAPSHOT_HELPER,
} from '../lease-session/index.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import type { SnapshotNode } from '../snapshot/types.ts';
import { BRIDGE_VERSION } from '../version.ts';
import { clip, diagnose, doctorDevice, parseGetprop } from './doctor-diagnosis.ts';
import type { GlassService } from './glass-service.ts';
import type { HelperService } from './helper-service.ts';

/** What the doctor types and sets: accents, CJK, an emoji outside the BMP. */
export const DOCTOR_TEXT = 'héllo 日本 😀';
export const DOCTOR_SET_TEXT = 'set_text ✓ Ünïcode 文字';
/** The self-test activity of the glass a11y APK (relative to its package). */
export const SELF_TEST_ACTIVITY = '.SelfTestActivity';

const TITLES: Record<DoctorCheckId, string> = {
  'helpers-installed': 'helpers installed (test-package installs allowed)',
  'self-test-screen': 'self-test screen launched',
  viewport: 'viewport',
  'snapshot-one-shot': 'snapshot, one-shot',
  'snapshot-session': 'snapshot, persistent session',
  gesture: 'gesture (tap)',
  'glass-agent': 'glass agent start and ping',
  clipboard: 'clipboard round trip (your clip restored)',
  keys: 'key injection',
  'a11y-enable': 'accessibility service enabled',
  'a11y-tree': 'accessibility tree',
  'unicode-text': 'Unicode text typed and read back',
  'set-text': 'set_text through the accessibility service',
  'settings-restored': 'device put back (companions stopped, settings restored)',
};

/** Time kept back from the checks for putting the device back. */
const CLEANUP_RESERVE_MS = 20_000;
/** Less time than this left: the bound has run out (a check started with a few ms left only times out). */
const MIN_CHECK_MS = 1_000;
const SHELL = { maxOutputBytes: 256 * 1024 };

export interface DoctorServiceOptions {
  scopes: LeaseScopes;
  room: LeaseRoom;
  helpers: HelperService;
  glass: GlassService;
  releases: Pick<ReleaseRepository, 'getLatestRelease'>;
  /** This node's name (in the report). */
  node: string;
}

const since = (started: number) => Math.round(performance.now() - started);

/** The first editable node of the self-test package's window in a normalized a11y tree. */
function editableIn(root: A11yNode): A11yNode | null {
  if (root.editable) return root;
  for (const child of root.children) {
    const found = editableIn(child);
    if (found !== null) return found;
  }
  return null;
}

/** The self-test field in a normalized snapshot: an EditText of the self-test package. */
function fieldIn(windows: SnapshotNode[], pkg: string): SnapshotNode | null {
  for (const node of windows) {
    if (node.package === pkg && /EditText$/.test(node.className) && node.bounds !== null) return node;
    const found = fieldIn(node.children, pkg);
    if (found !== null) return found;
  }
  return null;
}

export class DoctorService {
  readonly #o: DoctorServiceOptions;

  constructor(options: DoctorServiceOptions) {
    this.#o = options;
  }

  async run(scope: LeaseScope, request: { timeoutSeconds?: number } = {}): Promise<DoctorReport> {
    const { room, helpers, glass } = this.#o;
    // Runs where the device is driven (the route forwards it there); refused here otherwise.
    const target = this.#o.scopes.local(scope);
    const startedAt = new Date();
    const started = performance.now();
    const timeoutSeconds = request.timeoutSeconds ?? DOCTOR_DEFAULT_SECONDS;
    const checksEnd = started + Math.max(5_000, timeoutSeconds * 1000 - CLEANUP_RESERVE_MS);
    const shell = (argv: string[], timeoutMs = 15_000) =>
      room.farm.shell(target, scope.lease.tenant, { argv }, { ...SHELL, timeoutMs });

    // Who the device is (one getprop round trip) and what it had before the doctor touched it.
    const props = await shell(['getprop']).then(
      (r) => parseGetprop(r.stdout.toString('utf8')),
      () => new Map<string, string>(),
    );
    const settingsBefore = await room.glass.a11ySettings(target).catch((err: unknown) => err);
    const releases = await Promise.all(
      [SNAPSHOT_HELPER, GLASS_AGENT, GLASS_A11Y].map(async (name) => ({
        name,
        release: await this.#o.releases.getLatestRelease(name).catch(() => null),
      })),
    );
    const a11yRelease = releases.find((r) => r.name === GLASS_A11Y)?.release;
    const a11yPackage = typeof a11yRelease?.packageName === 'string' ? a11yRelease.packageName : null;

    const checks: DoctorCheck[] = [];
    const passed = new Set<DoctorCheckId>();
    const check = async (
      id: DoctorCheckId,
      needs: DoctorCheckId[],
      fn: (leftMs: number) => Promise<string>,
    ): Promise<void> => {
      const at = performance.now();
      const missing = needs.find((n) => !passed.has(n));
      if (missing !== undefined) {
        const how = checks.find((c) => c.id === missing)?.status === 'fail' ? 'failed' : 'was skipped';
        checks.push({
          id,
          title: TITLES[id],
          status: 'skip',
          elapsedMs: 0,
          detail: `needs ${missing}, which ${how}`,
        });
        return;
      }
      const left = Math.round(checksEnd - at);
      if (left < MIN_CHECK_MS) {
        checks.push({
          id,
          title: TITLES[id],
          status: 'skip',
          elapsedMs: 0,
          detail: `the run's bound of ${timeoutSeconds} s ran out before this check`,
        });
        return;
      }
      try {
        const detail = await withDeadline(fn(left), { timeoutMs: left }, `${id} (what was left of the run)`);
        passed.add(id);
        checks.push({ id, title: TITLES[id], status: 'pass', elapsedMs: since(at), detail: clip(detail) });
      } catch (err) {
        checks.push({ id, title: TITLES[id], status: 'fail', elapsedMs: since(at), ...diagnose(id, err) });
      }
    };

    let field: { x: number; y: number } | null = null;
    let a11yField: A11yNode | null = null;
    let launched = false;
    const deadlineMs = (left: number) => Math.max(1, Math.min(left, 60_000));

    await check('helpers-installed', [], async () => {
      const done: string[] = [];
      for (const name of [SNAPSHOT_HELPER, GLASS_A11Y]) {
        const r =
          name === GLASS_A11Y ? await room.glass.ensureA11yApk(target) : await helpers.ensure(scope, name);
        const declared = releases.find((x) => x.name === name)?.release?.installArgs;
        const args: unknown[] = Array.isArray(declared) ? declared : [];
        done.push(
          `${name} ${r.action === 'none' ? 'already installed' : r.action} (${r.packageName}, versionCode ${r.versionCode}${args.includes('-t') ? ', -t' : ''})`,
        );
      }
      return done.join('; ');
    });

    await check('self-test-screen', ['helpers-installed'], async () => {
      const component = `${a11yPackage}/${SELF_TEST_ACTIVITY}`;
      const r = await shell(['am', 'start', '-W', '-n', component]);
      const out = `${r.stdout.toString('utf8')}${r.stderr.toString('utf8')}`;
      if (r.exitCode !== 0 || /^(Error|Exception)/m.test(out)) {
        throw new BridgeError('HELPER_FAILED', `am start -n ${component} failed: ${out.trim()}`);
      }
      launched = true;
      return `started ${component}`;
    });

    await check('viewport', ['helpers-installed'], async (left) => {
      const v = await helpers.viewport(scope, { transport: 'one-shot', deadlineMs: deadlineMs(left) });
      return `${v.width}x${v.height} at ${v.x},${v.y}`;
    });

    const snapshot = async (transport: 'one-shot' | 'session', left: number) => {
      const s = await helpers.snapshot(scope, { format: 'json', transport, deadlineMs: deadlineMs(left) });
      const found = a11yPackage === null ? null : fieldIn(s.snapshot.windows, a11yPackage);
      if (found?.bounds) {
        const b = found.bounds;
        field = { x: Math.round(b.x + b.width / 2), y: Math.round(b.y + b.height / 2) };
      }
      return `${s.snapshot.nodeCount} nodes in ${s.elapsedMs} ms${found ? ', the self-test field among them' : ''}`;
    };
    await check('snapshot-one-shot', ['helpers-installed'], (left) => snapshot('one-shot', left));
    await check('snapshot-session', ['helpers-installed'], (left) => snapshot('session', left));

    // Taps the doctor's own screen only (never an app of the user's).
    await check('gesture', ['helpers-installed', 'self-test-screen'], async (left) => {
      let at = field as { x: number; y: number } | null;
      if (at === null) {
        const v = await helpers.viewport(scope, { deadlineMs: deadlineMs(left) });
        at = { x: Math.round(v.x + v.width / 2), y: Math.round(v.y + v.height / 2) };
      }
      const g = await helpers.gesture(
        scope,
        { kind: 'tap', x: at.x, y: at.y },
        { deadlineMs: deadlineMs(left) },
      );
      return `tap at ${at.x},${at.y}: ${g.injectedEvents} events`;
    });

    await check('glass-agent', [], async () => {
      await room.glass.agent(target, 'ping');
      return 'started; answered ping';
    });

    await check('clipboard', ['glass-agent'], async () => {
      const before = (await glass.clipboardGet(scope)).text;
      const marker = `devicebridge doctor ✓ ${startedAt.getTime()}`;
      try {
        await glass.clipboardSet(scope, marker);
        const read = (await glass.clipboardGet(scope)).text;
        if (read !== marker) {
          throw new BridgeError(
            'HELPER_FAILED',
            `the clipboard read back ${JSON.stringify(read)}, not ${JSON.stringify(marker)}`,
          );
        }
      } finally {
        await glass.clipboardSet(scope, before);
      }
      return `set and read back; your clip (${before.length} characters) restored`;
    });

    // Keys and text go to the self-test field (focused by the launch), never to an app of the user's.
    await check('keys', ['glass-agent', 'self-test-screen'], async () => {
      await glass.key(scope, 'backspace');
      return 'backspace injected';
    });

    let firstTree: { nodeCount: number; package: string | null; root: A11yNode } | null = null;
    // Enabling installs the a11y APK itself: it runs even when the helpers' check failed, so that a
    // device whose installs are refused says so here too.
    await check('a11y-enable', [], async () => {
      const tree = await glass.a11yTree(scope, {});
      if (tree.format !== 'normalized') throw new BridgeError('INTERNAL', 'expected a normalized tree');
      firstTree = tree;
      return `enabled and bound; it answered from ${tree.package ?? 'an unnamed window'}`;
    });

    await check('a11y-tree', ['a11y-enable', 'self-test-screen'], async () => {
      const tree = firstTree as { nodeCount: number; package: string | null; root: A11yNode } | null;
      if (tree === null) throw new BridgeError('INTERNAL', 'no tree was served');
      if (tree.package !== a11yPackage) {
        throw new BridgeError(
          'HELPER_FAILED',
          `the tree came from ${tree.package ?? 'an unnamed window'}, not the self-test screen (${a11yPackage})`,
        );
      }
      a11yField = editableIn(tree.root);
      if (a11yField === null)
        throw new BridgeError('HELPER_FAILED', 'the self-test field is not in the tree');
      return `${tree.nodeCount} nodes; the self-test field is ${a11yField.ref}`;
    });

    const fieldText = async (): Promise<string> => {
      const tree = await glass.a11yTree(scope, {});
      const node = tree.format === 'normalized' ? editableIn(tree.root) : null;
      if (node === null) throw new BridgeError('HELPER_FAILED', 'the self-test field left the tree');
      a11yField = node;
      return node.text;
    };

    await check('unicode-text', ['glass-agent', 'a11y-tree'], async () => {
      await glass.text(scope, DOCTOR_TEXT);
      const read = await fieldText();
      if (!read.endsWith(DOCTOR_TEXT)) {
        throw new BridgeError(
          'HELPER_FAILED',
          `typed ${JSON.stringify(DOCTOR_TEXT)} but the field reads ${JSON.stringify(read)}`,
        );
      }
      return `typed and read back ${JSON.stringify(DOCTOR_TEXT)}`;
    });

    await check('set-text', ['a11y-tree'], async () => {
      await fieldText(); // a fresh tree: the ref must come from the tree served last
      const ref = (a11yField as A11yNode | null)?.ref as string;
      await glass.a11yAction(scope, { ref, action: 'set_text', text: DOCTOR_SET_TEXT });
      const read = await fieldText();
      if (read !== DOCTOR_SET_TEXT) {
        throw new BridgeError(
          'HELPER_FAILED',
          `set ${JSON.stringify(DOCTOR_SET_TEXT)} but the field reads ${JSON.stringify(read)}`,
        );
      }
      return `set and read back ${JSON.stringify(DOCTOR_SET_TEXT)}`;
    });

    // Put the device back (always, whatever passed): the helper session and the companions stopped,
    // the a11y settings restored from the lease's journal, the self-test activity stopped.
    const cleanupStarted = performance.now();
    const cleanup = { actions: [] as string[], failures: [] as string[] };
    /** What the settings were before the lease's a11y service was first enabled (by the doctor or earlier). */
    let prior: [string | null, string | null] | null = null;
    try {
      const stopped = await room.teardown.stopHelpers(target);
      cleanup.actions.push(...stopped.actions);
      cleanup.failures.push(...stopped.failures);
      if (stopped.restored !== null)
        prior = [stopped.restored[ENABLED_SERVICES], stopped.restored[ACCESSIBILITY_ENABLED]];
    } catch (err) {
      cleanup.failures.push(`stopping the helpers: ${(err as Error).message}`);
    }
    if (launched && a11yPackage !== null) {
      try {
        const r = await shell(['am', 'force-stop', a11yPackage]);
        if (r.exitCode === 0) cleanup.actions.push(`stopped the self-test activity (${a11yPackage})`);
        else cleanup.failures.push(`am force-stop ${a11yPackage} exited ${r.exitCode}`);
      } catch (err) {
        cleanup.failures.push(`stopping the self-test activity: ${(err as Error).message}`);
      }
    }
    let restored: DoctorCheck;
    try {
      if (!Array.isArray(settingsBefore)) throw settingsBefore;
      const after = await room.glass.a11ySettings(target);
      // The lease may have enabled the service before the doctor ran: the device goes back to how the
      // lease found it (the journaled values), which the lease's next a11y call enables again.
      const [services, enabled] = prior ?? (settingsBefore as [string | null, string | null]);
      if (cleanup.failures.length > 0) {
        throw new BridgeError('HELPER_FAILED', `putting the device back: ${cleanup.failures.join('; ')}`);
      }
      if (after[0] !== services || after[1] !== enabled) {
        throw new BridgeError(
          'HELPER_FAILED',
          `secure settings differ from before: ${ENABLED_SERVICES}=${JSON.stringify(after[0])} (was ${JSON.stringify(services)}), ${ACCESSIBILITY_ENABLED}=${JSON.stringify(after[1])} (was ${JSON.stringify(enabled)})`,
        );
      }
      restored = {
        id: 'settings-restored',
        title: TITLES['settings-restored'],
        status: 'pass',
        elapsedMs: since(cleanupStarted),
        detail: clip(
          `${ENABLED_SERVICES} and ${ACCESSIBILITY_ENABLED} as before; ${cleanup.actions.join('; ')}`,
        ),
      };
    } catch (err) {
      restored = {
        id: 'settings-restored',
        title: TITLES['settings-restored'],
        status: 'fail',
        elapsedMs: since(cleanupStarted),
        ...diagnose('settings-restored', err),
      };
    }
    checks.push(restored);

    // The lease ended while the doctor ran (its teardown put the device back): no report, as for any call.
    if (checks.some((c) => c.errorCode === 'LEASE_EXPIRED')) {
      throw new BridgeError('LEASE_EXPIRED', `lease ${scope.lease.id} ended while the doctor ran`, {
        details: { leaseId: scope.lease.id },
      });
    }
    const ordered = DOCTOR_CHECK_IDS.map((id) => checks.find((c) => c.id === id) as DoctorCheck);
    const count = (s: DoctorCheck['status']) => ordered.filter((c) => c.status === s).length;
    return {
      ok: count('fail') === 0,
      leaseId: scope.lease.id,
      deviceId: scope.lease.deviceId,
      startedAt: startedAt.toISOString(),
      elapsedMs: since(started),
      timeoutSeconds,
      bridge: { version: BRIDGE_VERSION, node: this.#o.node },
      device: doctorDevice(props),
      helpers: releases.map(({ name, release }) => ({
        name,
        version: typeof release?.version === 'string' ? release.version : null,
        sha256: typeof release?.sha256 === 'string' ? release.sha256 : null,
      })),
      summary: { pass: count('pass'), fail: count('fail'), skip: count('skip') },
      checks: ordered,
      cleanup,
    };
  }
}
