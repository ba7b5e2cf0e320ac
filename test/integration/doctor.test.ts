/**
 * The doctor end to end through a whole node (real adb server, a simulated device, Redis leases):
 * every check passes on the simulator and the device is left as it was found (secure settings,
 * clipboard, screen, no companion process or forward); each known failure (test-package installs
 * refused, input injection blocked, accessibility services restricted by policy) and the generic
 * path answer their message and fix; a later check that needs a failed one is skipped naming it;
 * other tenants cannot run it; every answer conforms to the route's documented schema.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DOCTOR_CHECK_IDS, type DoctorReport } from '../../src/api/index.ts';
import { DOCTOR_SET_TEXT, DOCTOR_TEXT } from '../../src/app/doctor-service.ts';
import { DeviceBridgeClient } from '../../src/client/index.ts';
import { listen } from '../../src/server/serve.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import type { Faults } from '../../src/simulator/types.ts';
import {
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  type DeviceBridge,
  OTHER_TENANT_TOKEN,
  tempDir,
  testDeviceBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { contractProblems } from '../support/contract.ts';
import { GLASS_AGENT_MAIN } from '../support/device-bed.ts';
import { publishGlassFixtures } from '../support/glass.ts';

const PREFIX = `test:${randomUUID()}:`;
let bridge: DeviceBridge;
let tmp: { dir: string; cleanup(): Promise<void> };
let http: { url: string; close(): Promise<void> };

beforeAll(async () => {
  bridge = await testDeviceBridge({
    simulate: 1,
    redisPrefix: PREFIX,
    auth: testTokens(),
    env: { DEVICEBRIDGE_NODE: 'doctor-a' },
  });
  tmp = await tempDir();
  await publishGlassFixtures(bridge.services.store, tmp.dir);
  http = await listen(bridge.app.fetch, { ...bridge.config, port: 0 }, '127.0.0.1');
}, 120_000);

afterAll(async () => {
  await http?.close();
  await bridge?.cleanup();
  await tmp?.cleanup();
});

const simulator = () => bridge.node.simulator!.devices[0]!;
const android = () => simulator().android as SimAndroidHandle;
const serial = () => simulator().serial;
const secure = (key: string) => android().runtime.settings.get('secure', key) ?? null;
const agents = () =>
  android()
    .device.processes()
    .filter((p) => p.cmdline.includes(GLASS_AGENT_MAIN));

async function req(method: string, path: string, body?: unknown, token = CLIENT_TOKEN) {
  const res = await timedRequest(bridge.app, method, path, body, { token });
  expect(contractProblems(method, path, res.status, res.body)).toEqual([]);
  return res;
}

const taken = new Set<string>();
async function acquire(token = CLIENT_TOKEN): Promise<{ id: string; deviceId: string }> {
  const res = await req('POST', '/v1/leases', { selector: {}, waitSeconds: 30 }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  taken.add(res.body['id'] as string);
  return res.body as { id: string; deviceId: string };
}

afterEach(async () => {
  simulator().clearFault();
  for (const id of taken) await req('DELETE', `/v1/leases/${id}`, undefined, ADMIN_TOKEN);
  taken.clear();
});

async function doctor(leaseId: string, faults?: Faults): Promise<DoctorReport> {
  if (faults) simulator().setFault(faults);
  const res = await req('POST', `/v1/leases/${leaseId}/doctor`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as DoctorReport;
}

const checkOf = (report: DoctorReport, id: string) => report.checks.find((c) => c.id === id)!;

describe('doctor', () => {
  it('every check passes on the simulator, and the device is left as it was found', async () => {
    const lease = await acquire();
    await bridge.node.adb.client.shell(
      serial(),
      'settings put secure enabled_accessibility_services com.keep/.Me',
    );
    android().device.clipboard = 'the user’s clip ✂';
    const before = {
      services: secure('enabled_accessibility_services'),
      enabled: secure('accessibility_enabled'),
      screen: android().device.uiXml(),
    };

    const report = await doctor(lease.id);
    expect(report.checks.map((c) => c.id)).toEqual([...DOCTOR_CHECK_IDS]);
    expect(
      report.checks.filter((c) => c.status !== 'pass'),
      JSON.stringify(report.checks, null, 2),
    ).toEqual([]);
    expect(report).toMatchObject({
      ok: true,
      leaseId: lease.id,
      deviceId: lease.deviceId,
      summary: { pass: DOCTOR_CHECK_IDS.length, fail: 0, skip: 0 },
      device: {
        model: 'DeviceBridge Sim',
        manufacturer: 'DeviceBridge',
        sdk: 34,
        release: '14',
      },
      bridge: { node: 'doctor-a' },
    });
    expect(report.device.fingerprint).toMatch(/^DeviceBridge\/devicebridge_sim\//);
    expect(report.helpers.map((h) => [h.name, h.version])).toEqual([
      ['android-snapshot-helper', '0.2.0'],
      ['glass-agent', '1.0.0'],
      ['glass-a11y', '0.1.0'],
    ]);
    for (const c of report.checks) expect(c.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(report.cleanup.failures).toEqual([]);

    // What the checks did reached the device: the text typed, the field set through the service.
    const events = android().inputEvents();
    expect(events).toContainEqual(expect.objectContaining({ type: 'glass-text', text: DOCTOR_TEXT }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'a11y-set_text', text: DOCTOR_SET_TEXT }));

    // Left as found: settings, the user's clip, the screen; no agent, no forward of the lease.
    expect(secure('enabled_accessibility_services')).toBe(before.services);
    expect(secure('accessibility_enabled')).toBe(before.enabled);
    expect(android().device.clipboard).toBe('the user’s clip ✂');
    expect(android().device.uiXml()).toBe(before.screen);
    await expect.poll(() => agents().length, { timeout: 10_000 }).toBe(0);
    expect(bridge.node.adb.ledger.entries(lease.id)).toEqual([]);
    expect(android().glassA11y.bound).toBe(false);

    // The lease goes on: its glass calls start the companions again.
    expect((await req('GET', `/v1/leases/${lease.id}/clipboard`)).body).toEqual({
      text: 'the user’s clip ✂',
    });
  });

  it('a lease that already used the a11y service: the settings go back to how the lease found them, and its next tree enables it again', async () => {
    const prior = secure('enabled_accessibility_services');
    const lease = await acquire();
    expect((await req('GET', `/v1/leases/${lease.id}/a11y/tree`)).status).toBe(200);
    expect(secure('enabled_accessibility_services')).not.toBe(prior);
    const report = await doctor(lease.id);
    expect(report.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(secure('enabled_accessibility_services')).toBe(prior);
    expect((await req('GET', `/v1/leases/${lease.id}/a11y/tree`)).status).toBe(200);
  });

  it('input injection blocked (MIUI, HyperOS, ColorOS) says to switch on USB debugging (Security settings)', async () => {
    const lease = await acquire();
    const report = await doctor(lease.id, { injectBlocked: true });
    expect(report.ok).toBe(false);
    const keys = checkOf(report, 'keys');
    expect(keys).toMatchObject({ status: 'fail', known: 'injection-blocked' });
    expect(keys.detail).toContain('INJECT_EVENTS');
    expect(keys.fix).toContain('USB debugging (Security settings)');
    // The clipboard is not input injection: it still passes; typing depends on injection too.
    expect(checkOf(report, 'clipboard').status).toBe('pass');
    expect(checkOf(report, 'unicode-text')).toMatchObject({ status: 'fail', known: 'injection-blocked' });
    expect(checkOf(report, 'settings-restored').status).toBe('pass');
  });

  it('accessibility services restricted by policy: enabling does not bind, and the fix names an admin policy', async () => {
    const lease = await acquire();
    const prior = secure('enabled_accessibility_services');
    const report = await doctor(lease.id, { a11yPolicyBlocked: true });
    const enable = checkOf(report, 'a11y-enable');
    expect(enable).toMatchObject({
      status: 'fail',
      known: 'a11y-restricted',
      errorCode: 'COMPANION_UNSUPPORTED',
    });
    expect(enable.fix).toContain('an admin policy may restrict accessibility services');
    for (const id of ['a11y-tree', 'set-text'] as const) {
      expect(checkOf(report, id).status).toBe('skip');
    }
    expect(checkOf(report, 'a11y-tree').detail).toBe('needs a11y-enable, which failed');
    expect(checkOf(report, 'unicode-text').detail).toBe('needs a11y-tree, which was skipped');
    expect(checkOf(report, 'settings-restored').status).toBe('pass');
    expect(secure('enabled_accessibility_services')).toBe(prior);
  }, 60_000);

  it('screen off or locked: the a11y service answers but has no window, and the fix says to wake and unlock the device', async () => {
    const lease = await acquire();
    const report = await doctor(lease.id, { noActiveWindow: true });
    const enable = checkOf(report, 'a11y-enable');
    expect(enable, JSON.stringify(enable)).toMatchObject({ status: 'fail', known: 'screen-off' });
    expect(enable.fix).toContain('Wake the device and unlock it');
    expect(checkOf(report, 'a11y-tree').detail).toBe('needs a11y-enable, which failed');
    expect(checkOf(report, 'settings-restored').status).toBe('pass');
  });

  it('a generic failure (the helper crashes) is reported as such, with how to send the report', async () => {
    const lease = await acquire();
    const report = await doctor(lease.id, { helperCrash: true });
    const oneShot = checkOf(report, 'snapshot-one-shot');
    expect(oneShot).toMatchObject({ status: 'fail', known: 'generic' });
    expect(oneShot.fix).toContain('devicebridge doctor --lease ID --json');
    expect(report.ok).toBe(false);
    expect(checkOf(report, 'settings-restored').status).toBe('pass');
  });

  it('test-package installs refused: "Install via USB", and everything needing the helpers is skipped', async () => {
    const lease = await acquire();
    // The helpers must not be on the device already (an earlier lease may have left them).
    await bridge.node.adb.client.shell(serial(), 'pm uninstall com.callstack.agentdevice.snapshothelper');
    await bridge.node.adb.client.shell(serial(), 'pm uninstall dev.glass.a11y');
    for (const code of ['INSTALL_FAILED_TEST_ONLY', 'INSTALL_FAILED_USER_RESTRICTED']) {
      const report = await doctor(lease.id, { installFailure: code });
      const installed = checkOf(report, 'helpers-installed');
      expect(installed).toMatchObject({ status: 'fail', known: 'test-install-refused' });
      expect(installed.detail).toContain(code);
      expect(installed.fix).toContain('Install via USB');
      for (const id of ['self-test-screen', 'viewport', 'snapshot-one-shot', 'gesture'] as const) {
        expect(checkOf(report, id)).toMatchObject({
          status: 'skip',
          detail: 'needs helpers-installed, which failed',
        });
      }
      expect(checkOf(report, 'glass-agent').status).toBe('pass');
      expect(checkOf(report, 'settings-restored').status).toBe('pass');
    }
  });

  it('the run is bounded: a helper that never answers fails its check at the bound, the rest are skipped, the device is still put back', async () => {
    const lease = await acquire();
    simulator().setFault({ helperTimeout: true });
    const res = await req('POST', `/v1/leases/${lease.id}/doctor`, { timeoutSeconds: 10 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const report = res.body as DoctorReport;
    // The bound is seen in the report: the checks after the hung one are skipped for it.
    expect(report.timeoutSeconds).toBe(10);
    expect(checkOf(report, 'helpers-installed').status).toBe('pass');
    expect(checkOf(report, 'viewport')).toMatchObject({ status: 'fail', errorCode: 'TIMEOUT' });
    for (const id of ['snapshot-one-shot', 'snapshot-session', 'glass-agent', 'a11y-enable'] as const) {
      expect(checkOf(report, id)).toMatchObject({
        status: 'skip',
        detail: "the run's bound of 10 s ran out before this check",
      });
    }
    expect(checkOf(report, 'set-text').detail).toBe('needs a11y-tree, which was skipped');
    expect(checkOf(report, 'settings-restored').status).toBe('pass');
    expect(android().device.uiXml()).not.toContain('Device Bridge self-test');
  }, 30_000);

  it('a lease that ends while the doctor runs answers LEASE_EXPIRED, and its teardown puts the device back', async () => {
    const lease = await acquire();
    const prior = secure('enabled_accessibility_services');
    simulator().setFault({ helperTimeout: true });
    const running = timedRequest(
      bridge.app,
      'POST',
      `/v1/leases/${lease.id}/doctor`,
      {},
      { token: CLIENT_TOKEN },
    );
    // The doctor is on its own screen, waiting for the helper: the lease ends under it.
    await expect
      .poll(() => android().device.uiXml(), { timeout: 10_000 })
      .toContain('Device Bridge self-test');
    expect((await req('DELETE', `/v1/leases/${lease.id}`)).status).toBe(200);
    taken.delete(lease.id);
    const res = await running;
    expect(res.status, JSON.stringify(res.body)).toBe(410);
    expect(res.body.error.code).toBe('LEASE_EXPIRED');
    expect(secure('enabled_accessibility_services')).toBe(prior);
    expect(bridge.node.adb.ledger.entries(lease.id)).toEqual([]);
  }, 30_000);

  it('another tenant cannot run the doctor on the lease (404, never 403)', async () => {
    const lease = await acquire();
    const res = await req('POST', `/v1/leases/${lease.id}/doctor`, {}, OTHER_TENANT_TOKEN);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    const bad = await req('POST', `/v1/leases/${lease.id}/doctor`, { timeoutSeconds: 1 });
    expect(bad.status).toBe(400);
  });

  it('the typed client and the CLI: a table by default (exit 0), the typed report with --json, exit 1 with the fix', async () => {
    const lease = await acquire();
    const client = new DeviceBridgeClient({ baseUrl: http.url, token: CLIENT_TOKEN });
    const report = await client.doctor(lease.id, { timeoutSeconds: 40 });
    expect(report).toMatchObject({ ok: true, timeoutSeconds: 40, summary: { fail: 0 } });
    // Not forwarded: the default bound, whatever the forward timeout.
    expect((await client.doctor(lease.id)).timeoutSeconds).toBe(120);

    const env = { DEVICEBRIDGE_URL: http.url, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN };
    const cli = (...args: string[]) => runCli(args, { env, timeoutMs: 90_000 });
    const human = await cli('doctor', '--lease', lease.id);
    expect(human.code, human.stderr).toBe(0);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toBe(`device ${lease.deviceId}: DeviceBridge DeviceBridge Sim, Android 14 (API 34)`);
    for (const id of DOCTOR_CHECK_IDS) {
      expect(
        lines.some((l) => new RegExp(`^pass  ${id} +\\d+ ms  \\S`).test(l)),
        id,
      ).toBe(true);
    }
    expect(human.stdout).toContain(`${DOCTOR_CHECK_IDS.length} passed, 0 failed, 0 skipped`);

    const json = await cli('doctor', '--lease', lease.id, '--json');
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as DoctorReport;
    expect(contractProblems('POST', `/v1/leases/${lease.id}/doctor`, 200, parsed)).toEqual([]);
    expect(parsed.checks.map((c) => [c.id, c.status])).toEqual(DOCTOR_CHECK_IDS.map((id) => [id, 'pass']));

    simulator().setFault({ injectBlocked: true });
    const failed = await cli('doctor', '--lease', lease.id);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^FAIL {2}keys +\d+ ms {2}HELPER_FAILED: .*INJECT_EVENTS/m);
    expect(failed.stdout).toContain('fix: The device blocks input injection from adb');
    expect(failed.stdout).toContain(`devicebridge doctor --lease ${lease.id} --json > doctor-report.json`);
    const failedJson = await cli('doctor', '--lease', lease.id, '--json');
    expect(failedJson.code).toBe(1);
    expect((JSON.parse(failedJson.stdout) as DoctorReport).ok).toBe(false);

    const usage = await cli('doctor');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('doctor needs --lease ID');
  }, 120_000);
});
