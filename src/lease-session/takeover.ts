/**
 * This node took a device over from a dead node (`from`), which may have left its leases'
 * device-side processes running (they outlive the dead node's adb connection on a real device): the
 * glass agent (`pkill -f` the main classes of all its releases, literally: the agent driver's one
 * stop) and the snapshot helper's session instrumentation (`am force-stop` its package, as a
 * session's close does). A lease that moved with the device starts what it needs again, lazily, on
 * its next call here; the device's operations wait for this cleanup. The device may still be
 * connecting: each step is retried until it answers, for up to `waitMs`. Never throws; resolves
 * what it did. Not done here: forwards live in the dead node's adb server (see the README's
 * takeover notes).
 */
import { stopGlassAgentProcesses } from '../helpers/glass/agent-driver.ts';
import { glassAgentMainClasses } from '../helpers/glass/companions.ts';
import { forceStop } from '../helpers/snapshot/one-shot.ts';
import type { Closed } from './resources.ts';
import type { LeaseSessions } from './session.ts';
import { SNAPSHOT_HELPER } from './snapshot.ts';

export function cleanAfterTakeover(
  sessions: LeaseSessions,
  serial: string,
  from: string,
  waitMs = 30_000,
): Promise<Closed> {
  const run = clean(sessions, serial, from, waitMs);
  const barrier = run.then(
    () => undefined,
    () => undefined,
  );
  sessions.takeovers.set(serial, barrier);
  void barrier.then(() => {
    if (sessions.takeovers.get(serial) === barrier) sessions.takeovers.delete(serial);
  });
  return run;
}

async function clean(sessions: LeaseSessions, serial: string, from: string, waitMs: number): Promise<Closed> {
  const actions: string[] = [];
  const failures: string[] = [];
  const { releases } = sessions.options;
  const device = sessions.device(serial);
  const until = Date.now() + waitMs;
  /** Retry `step` while the device does not answer (still connecting), until the deadline. */
  const answered = async <T>(step: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await step();
      } catch (err) {
        if (Date.now() + 500 >= until) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const agentClasses = await glassAgentMainClasses(releases).catch(() => []);
  if (agentClasses.length > 0) {
    try {
      const killed = await answered(() => stopGlassAgentProcesses(device, agentClasses, 5000));
      actions.push(
        killed
          ? `stopped a glass agent ${from} left running on ${serial}`
          : `no glass agent ${from} left was running on ${serial}`,
      );
    } catch (err) {
      failures.push(`stopping a glass agent ${from} left on ${serial}: ${(err as Error).message}`);
    }
  }
  const helper = await releases.getLatestManifest(SNAPSHOT_HELPER).catch(() => null);
  if (helper !== null) {
    try {
      // forceStop swallows errors: ask the device once first, so a device that never answers is reported.
      await answered(() => device.shell('true', { timeoutMs: 5000 }));
      await forceStop(device, helper.packageName);
      actions.push(
        `force-stopped ${helper.packageName} (a helper session ${from} may have left) on ${serial}`,
      );
    } catch (err) {
      failures.push(`stopping the helper ${from} may have left on ${serial}: ${(err as Error).message}`);
    }
  }
  return { actions, failures };
}
