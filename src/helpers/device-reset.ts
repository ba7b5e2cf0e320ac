/**
 * The reset between tenants on one device, and the baseline it restores (what adb can see: pure
 * rules in `devices/baseline.ts`). A reset reads the device once, undoes what differs from the
 * baseline in one batched shell script per kind of step — kill the shell-user processes that
 * started, uninstall the packages that were added, remove the files, put the settings back — then
 * removes adb forwards and reverses, clears the clipboard, wakes the screen, dismisses a keyguard
 * without a credential and goes home, and reads the device again to verify. Every step and what it
 * removed goes into the teardown record's actions; what it could not undo (a baseline package
 * replaced or removed, a baseline file removed, a step that failed, a difference still there) into
 * its failures, which take the device out of the pool.
 */
import type { ShellOptions, ShellResult } from '../adb/client.ts';
import {
  type DeviceBaseline,
  type DeviceReading,
  decidePackages,
  describeDiff,
  diffReading,
  HOME_SCRIPT,
  isClean,
  killScript,
  parseItemOutcomes,
  quotable,
  removeScript,
  settingsScript,
  uninstallScript,
} from '../devices/baseline.ts';
import { apkSums, newMarker, readDevice } from '../devices/baseline-capture.ts';
import type { ResetPolicy } from '../devices/reset-policy.ts';

/** What a reset needs of the device and of the adb server. */
export interface ResetTarget {
  readonly serial: string;
  shell(command: string, options?: ShellOptions): Promise<ShellResult>;
  /** The adb server's forwards of this device (`local` → `remote`). */
  forwards(): Promise<Array<{ local: string; remote: string }>>;
  removeForward(local: string): Promise<void>;
  /** The device's reverses (`reverse:list-forward`). */
  reverses(): Promise<Array<{ local: string; remote: string }>>;
  removeReverse(local: string): Promise<void>;
}

/** What the bridge keeps on a device besides the baseline. */
export interface ResetContext {
  /** The bridge's own helper packages: kept when their APK is one of these sha256s, else uninstalled. */
  helperPackages: ReadonlyMap<string, ReadonlySet<string>>;
  /** Files the bridge keeps (its helper jars; their bytes are verified before every start). */
  keepPaths: ReadonlySet<string>;
  /** Apps the lease asked to keep (package → the sha256 of the APK it installed): left installed, taken into the baseline. */
  keptApps: ReadonlyMap<string, string>;
  /** Clear the clipboard (the glass agent); resolves what it did, null when it cannot here. */
  clearClipboard?: () => Promise<string | null>;
}

export interface ResetResult {
  actions: string[];
  failures: string[];
  /** adb round trips the reset made (shell calls and host requests). */
  roundTrips: number;
  /** The baseline with what the reset accepted (kept apps, a package reinstalled with the same APK); null when unchanged. */
  baseline: DeviceBaseline | null;
}

const STEP_MS = 60_000;

function counted(target: ResetTarget): { target: ResetTarget; count: () => number } {
  let n = 0;
  const wrap =
    <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
    (...a: A): Promise<R> => {
      n++;
      return fn(...a);
    };
  return {
    target: {
      serial: target.serial,
      shell: wrap(target.shell.bind(target)),
      forwards: wrap(target.forwards.bind(target)),
      removeForward: wrap(target.removeForward.bind(target)),
      reverses: wrap(target.reverses.bind(target)),
      removeReverse: wrap(target.removeReverse.bind(target)),
    },
    count: () => n,
  };
}

/**
 * Run one batched step: `script` builds it with a fresh marker; resolves each item's outcome (or
 * rejects: the whole step failed).
 */
async function step(target: ResetTarget, script: (marker: string) => string): Promise<Map<number, string>> {
  const marker = newMarker();
  const out = await target.shell(script(marker), { timeoutMs: STEP_MS });
  return parseItemOutcomes(out.stdout.toString('utf8'), marker);
}

/**
 * Reset the device to `baseline`. Never throws: every failure is a line of `failures`.
 */
export async function resetDevice(
  raw: ResetTarget,
  baseline: DeviceBaseline,
  policy: ResetPolicy,
  context: ResetContext,
): Promise<ResetResult> {
  const { target, count } = counted(raw);
  const actions: string[] = [];
  const failures: string[] = [];
  const serial = target.serial;
  let updated: DeviceBaseline | null = null;
  const run = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      failures.push(`reset: ${what} on ${serial}: ${(err as Error).message}`);
    }
  };

  let reading: DeviceReading;
  try {
    reading = await readDevice(target, policy);
  } catch (err) {
    return {
      actions,
      failures: [`reset: reading ${serial} failed: ${(err as Error).message}`],
      roundTrips: count(),
      baseline: null,
    };
  }
  const keepPackages = new Set(context.keptApps.keys());
  const diff = diffReading(baseline, reading, policy, { keepPackages, keepPaths: context.keepPaths });

  // Packages: the bridge's own helpers stay when they are a published release's bytes; a baseline
  // package whose APK moved stays when its bytes are the baseline's (reinstalled as it was).
  const toCheck = [
    ...diff.addedPackages.filter((p) => context.helperPackages.has(p)).map((p) => reading.packages[p]!.path),
    ...diff.movedPackages.map((m) => m.now.path),
  ];
  let sums = new Map<string, string | null>();
  if (toCheck.length > 0) {
    await run('checking APKs', async () => {
      sums = await apkSums(target, toCheck);
    });
  }
  const decided = decidePackages(diff, reading, sums, context.helperPackages);
  const uninstall = decided.uninstall;
  for (const [name, entry] of Object.entries(decided.baseline)) {
    updated ??= structuredClone(baseline);
    if (entry === null) delete updated.packages[name];
    else updated.packages[name] = entry;
  }
  actions.push(...decided.notes.map((n) => `reset: ${n}`));
  failures.push(...decided.failures.map((f) => `reset: ${f}`));

  // Processes first, so nothing the tenant left recreates files while they are removed.
  if (diff.processes.length > 0) {
    await run('killing processes', async () => {
      const pids = diff.processes.map((p) => p.pid);
      const outcomes = await step(target, (marker) => killScript(pids, marker));
      diff.processes.forEach((p, i) => {
        const status = outcomes.get(i);
        if (status === '0') actions.push(`reset: killed process ${p.pid} (${p.args.slice(0, 120)})`);
        else if (status === undefined) failures.push(`reset: killing process ${p.pid}: no answer`);
        // A process that exited meanwhile is not a failure; the verification reads again.
      });
    });
  }
  if (uninstall.length > 0) {
    await run('uninstalling packages', async () => {
      const outcomes = await step(target, (marker) => uninstallScript(uninstall, marker));
      uninstall.forEach((p, i) => {
        const answer = outcomes.get(i) ?? '';
        if (/^Success/m.test(answer))
          actions.push(`reset: uninstalled package ${p} (added during the lease)`);
        else failures.push(`reset: uninstalling package ${p}: ${answer.split('\n')[0] || 'no answer'}`);
      });
    });
  }
  const removable = diff.addedPaths.filter(quotable);
  for (const p of diff.addedPaths.filter((p) => !quotable(p))) {
    failures.push(`reset: cannot remove ${JSON.stringify(p)}: its name holds a line break`);
  }
  if (removable.length > 0) {
    await run('removing files', async () => {
      const outcomes = await step(target, (marker) => removeScript(removable, marker));
      removable.forEach((p, i) => {
        if (outcomes.get(i) === '0') actions.push(`reset: removed ${p} (added during the lease)`);
        else failures.push(`reset: removing ${p} failed (exit ${outcomes.get(i) ?? 'unknown'})`);
      });
    });
  }
  for (const p of diff.missingPaths) {
    failures.push(`reset: baseline file ${p} was removed during the lease: it cannot be restored`);
  }
  const settings = diff.settings.filter((s) => quotable(s.key) && (s.value === null || quotable(s.value)));
  for (const s of diff.settings.filter((x) => !settings.includes(x))) {
    failures.push(`reset: cannot restore setting ${s.table} ${s.key}: its name or value holds a line break`);
  }
  if (settings.length > 0) {
    await run('restoring settings', async () => {
      const outcomes = await step(target, (marker) => settingsScript(settings, marker));
      settings.forEach((s, i) => {
        const what =
          s.value === null
            ? 'deleted setting'
            : s.now === null
              ? 'restored deleted setting'
              : 'restored setting';
        if (outcomes.get(i) === '0') actions.push(`reset: ${what} ${s.table} ${s.key}`);
        else
          failures.push(`reset: ${what} ${s.table} ${s.key} failed (exit ${outcomes.get(i) ?? 'unknown'})`);
      });
    });
  }
  if (context.clearClipboard !== undefined) {
    await run('clearing the clipboard', async () => {
      const done = await context.clearClipboard!();
      if (done !== null) actions.push(`reset: ${done}`);
    });
  }
  await run('removing forwards', async () => {
    for (const f of await target.forwards()) {
      await target.removeForward(f.local);
      actions.push(`reset: removed forward ${f.local} -> ${f.remote}`);
    }
  });
  await run('removing reverses', async () => {
    for (const r of await target.reverses()) {
      await target.removeReverse(r.local);
      actions.push(`reset: removed reverse ${r.local} -> ${r.remote}`);
    }
  });
  await run('going home', async () => {
    const out = await target.shell(HOME_SCRIPT, { timeoutMs: STEP_MS });
    if (out.exitCode !== 0)
      throw new Error(`exit ${out.exitCode}: ${out.stderr.toString('utf8').trim().slice(0, 200)}`);
    actions.push('reset: woke the screen, dismissed the keyguard, went home');
  });

  // Kept apps join the baseline (the next reset leaves them).
  for (const [name, sha256] of context.keptApps) {
    const pkg = reading.packages[name];
    if (pkg === undefined || baseline.packages[name]?.path === pkg.path) continue;
    updated ??= structuredClone(baseline);
    updated.packages[name] = { ...pkg, sha256 };
    actions.push(`reset: kept app ${name} joins the device's baseline`);
  }

  // Verify: what still differs is reported (the device leaves the pool).
  await run('verifying', async () => {
    const after = await readDevice(target, policy);
    const rest = diffReading(updated ?? baseline, after, policy, { keepPaths: context.keepPaths });
    const helperLeft = new Set(
      diff.addedPackages.filter((p) => context.helperPackages.has(p) && !uninstall.includes(p)),
    );
    rest.addedPackages = rest.addedPackages.filter((p) => !helperLeft.has(p));
    // Already reported above: a replaced or removed baseline package or file.
    rest.movedPackages = rest.movedPackages.filter((m) => !diff.movedPackages.some((d) => d.name === m.name));
    rest.missingPackages = rest.missingPackages.filter((p) => !diff.missingPackages.includes(p));
    rest.missingPaths = rest.missingPaths.filter((p) => !diff.missingPaths.includes(p));
    if (!isClean(rest))
      failures.push(`reset: still on ${serial} after the reset: ${describeDiff(rest).join('; ')}`);
  });
  return { actions, failures, roundTrips: count(), baseline: updated };
}
