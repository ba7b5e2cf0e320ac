/**
 * The glass companions per lease, end to end through a whole node (real adb server, a simulated
 * device, Redis leases): every operation over HTTP, the typed client and the CLI; the companions
 * start on first use and teardown stops them (no forward, no agent process, the settings back);
 * tenants cannot reach each other's companions; an unpublished companion, an unsupported device,
 * the seed's refusals and bad input are typed errors.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeviceBridgeClient } from '../../src/client/index.ts';
import { deviceIdFor } from '../../src/devices/properties.ts';
import { listen } from '../../src/server/serve.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
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
import { checkedOperations, contractProblems, GLASS_ROUTES } from '../support/contract.ts';
import { A11Y_FIXTURE_COMPONENT, GLASS_AGENT_MAIN } from '../support/device-bed.ts';
import { publishGlassA11y, publishGlassAgent } from '../support/glass.ts';

const PREFIX = `test:${randomUUID()}:`;
let bridge: DeviceBridge;
let tmp: { dir: string; cleanup(): Promise<void> };
let http: { url: string; close(): Promise<void> };

beforeAll(async () => {
  bridge = await testDeviceBridge({
    simulate: 1,
    redisPrefix: PREFIX,
    auth: testTokens(),
    env: { DEVICEBRIDGE_NODE: 'glass-a' },
  });
  tmp = await tempDir();
  http = await listen(bridge.app.fetch, { ...bridge.config, port: 0 }, '127.0.0.1');
}, 120_000);

afterAll(async () => {
  await http?.close();
  await bridge?.cleanup();
  await tmp?.cleanup();
});

/** One call; every answer conforms to the route's documented response (test/support/contract.ts). */
async function req(method: string, path: string, body?: unknown, token = CLIENT_TOKEN) {
  const res = await timedRequest(bridge.app, method, path, body, { token });
  expect(contractProblems(method, path, res.status, res.body)).toEqual([]);
  return res;
}

/** Both companions published (idempotent: the same bytes again are `unchanged`). */
async function published(): Promise<void> {
  await publishGlassAgent(bridge.services.store, tmp.dir, { version: '1.0.0' });
  await publishGlassA11y(bridge.services.store);
}

/** Leases a test took: released after it whatever happened (the one device must be free again). */
const taken = new Set<string>();

async function acquire(token = CLIENT_TOKEN): Promise<{ id: string; deviceId: string }> {
  const res = await req('POST', '/v1/leases', { selector: {}, waitSeconds: 20 }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  taken.add(res.body['id'] as string);
  return res.body as { id: string; deviceId: string };
}

afterEach(async () => {
  for (const id of taken) await req('DELETE', `/v1/leases/${id}`, undefined, ADMIN_TOKEN);
  taken.clear();
});

function android(): SimAndroidHandle {
  return bridge.node.simulator!.devices[0]!.android as SimAndroidHandle;
}
const serial = () => bridge.node.simulator!.devices[0]!.serial;
const agents = () =>
  android()
    .device.processes()
    .filter((p) => p.cmdline.includes(GLASS_AGENT_MAIN));
const leaseForwards = (leaseId: string) => bridge.node.adb.ledger.entries(leaseId);
const secure = (key: string) => android().runtime.settings.get('secure', key) ?? null;

describe('glass companions per lease', () => {
  it('an unpublished companion is NOT_FOUND naming the release and how to publish it', async () => {
    const lease = await acquire();
    const clip = await req('GET', `/v1/leases/${lease.id}/clipboard`);
    expect(clip.status).toBe(404);
    expect(clip.body.error.code).toBe('NOT_FOUND');
    expect(clip.body.error.message).toContain('glass-agent has no published release on this bridge');
    expect(clip.body.error.message).toContain('devicebridge release publish --jar');
    const tree = await req('GET', `/v1/leases/${lease.id}/a11y/tree`);
    expect(tree.status).toBe(404);
    expect(tree.body.error.message).toContain('glass-a11y has no published release');
    expect((await req('DELETE', `/v1/leases/${lease.id}`)).status).toBe(200);
  });

  it('a device that cannot run the agent is COMPANION_UNSUPPORTED', async () => {
    await publishGlassAgent(bridge.services.store, tmp.dir, {
      version: '0.0.1',
      mainClass: 'dev.other.Main',
    });
    const lease = await acquire();
    const clip = await req('GET', `/v1/leases/${lease.id}/clipboard`);
    expect(clip.status).toBe(501);
    expect(clip.body.error).toMatchObject({ code: 'COMPANION_UNSUPPORTED', retryable: false });
    expect(clip.body.error.message).toContain('cannot run the glass companion glass-agent');
    expect((await req('DELETE', `/v1/leases/${lease.id}`)).status).toBe(200);
    expect(agents()).toEqual([]);
  });

  it('every operation over HTTP; teardown stops both companions and restores the settings', async () => {
    await published();
    await bridge.node.adb.client.shell(
      serial(),
      'settings put secure enabled_accessibility_services com.keep/.Me',
    );
    // A farm's own change of the device between leases: the baseline is recorded again, so the
    // reset between tenants keeps it.
    await bridge.node.devices.recordBaseline(deviceIdFor(serial()));
    const priorEnabled = secure('accessibility_enabled');
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;

    expect((await req('PUT', `${base}/clipboard`, { text: 'Grüße 👋🏽 你好' })).body).toMatchObject({
      ok: true,
    });
    expect(android().device.clipboard).toBe('Grüße 👋🏽 你好');
    android().device.clipboard = 'from the device';
    expect((await req('GET', `${base}/clipboard`)).body).toEqual({ text: 'from the device' });
    expect((await req('POST', `${base}/text`, { text: 'héllo' })).status).toBe(200);
    expect((await req('POST', `${base}/keys`, { chord: 'ctrl+a' })).status).toBe(200);
    const pointer = await req('POST', `${base}/pointer`, {
      gesture: [
        { x: 100, y: 200, t_ms: 0 },
        { x: 300, y: 200, t_ms: 120 },
      ],
    });
    expect(pointer.status, JSON.stringify(pointer.body)).toBe(200);
    expect(agents()).toHaveLength(1);

    const tree = await req('GET', `${base}/a11y/tree`);
    expect(tree.status, JSON.stringify(tree.body)).toBe(200);
    expect(tree.body).toMatchObject({ format: 'normalized', root: { ref: 'e1', rawRef: 0 } });
    expect(tree.body.nodeCount).toBeGreaterThan(1);
    expect(secure('enabled_accessibility_services')).toBe(`com.keep/.Me:${A11Y_FIXTURE_COMPONENT}`);
    const raw = await req('GET', `${base}/a11y/tree?format=raw&package=com.example`);
    expect(raw.body).toMatchObject({ format: 'raw', tree: { ref: 0 } });

    // A device refusal of an action is COMPANION_REFUSED with the device's reason.
    const notEditable = findNode(tree.body.root, (n) => !n.editable);
    const refusedSet = await req('POST', `${base}/a11y/actions`, {
      ref: notEditable!.ref,
      action: 'set_text',
      text: 'x',
    });
    expect(refusedSet.status, JSON.stringify(refusedSet.body)).toBe(409);
    expect(refusedSet.body.error.code).toBe('COMPANION_REFUSED');
    expect(refusedSet.body.error.details.reason).toContain(`ref ${notEditable!.rawRef}`);
    const clickable = findNode(tree.body.root, (n) => n.clickable && n.enabled);
    expect(clickable, 'the served window has a clickable node').toBeDefined();
    const click = await req('POST', `${base}/a11y/actions`, { ref: clickable!.ref, action: 'click' });
    expect(click.status, JSON.stringify(click.body)).toBe(200);
    expect(click.body).toMatchObject({
      ok: true,
      ref: clickable!.ref,
      rawRef: clickable!.rawRef,
      action: 'click',
    });
    const byRaw = await req('POST', `${base}/a11y/actions`, { ref: clickable!.rawRef, action: 'click' });
    expect(byRaw.status).toBe(200);
    const outside = await req('POST', `${base}/a11y/actions`, { ref: 'e99999', action: 'click' });
    expect(outside.status).toBe(400);
    expect(outside.body.error.message).toContain('is not in the served tree');

    const released = await req('DELETE', base);
    expect(released.status).toBe(200);
    const teardown = released.body.teardown as { actions: string[]; failures: string[] };
    expect(teardown.failures).toEqual([]);
    expect(teardown.actions).toContain(`stopped glass agent on ${serial()}`);
    expect(teardown.actions).toContain(`closed glass a11y connection on ${serial()}`);
    expect(teardown.actions.filter((a) => a.startsWith('restored secure settings'))).toEqual([
      `restored secure settings enabled_accessibility_services, accessibility_enabled on ${serial()}`,
    ]);
    expect(leaseForwards(lease.id)).toEqual([]);
    expect((await bridge.node.adb.client.listForwards()).filter((f) => f.serial === serial())).toEqual([]);
    await expect.poll(() => agents().length, { timeout: 10_000 }).toBe(0);
    expect(secure('enabled_accessibility_services')).toBe('com.keep/.Me');
    expect(secure('accessibility_enabled')).toBe(priorEnabled);
  });

  it("the glass protocol's refusals: an action before any tree on this lease's connection is COMPANION_REFUSED", async () => {
    await published();
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    const prior = secure('enabled_accessibility_services');
    const early = await req('POST', `${base}/a11y/actions`, { ref: 'e1', action: 'click' });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ code: 'COMPANION_REFUSED', retryable: false });
    expect(early.body.error.details.reason).toContain('no tree has been served on this connection');
    // Refused before anything changes: the service was not enabled for it.
    expect(secure('enabled_accessibility_services')).toBe(prior);
    expect(leaseForwards(lease.id)).toEqual([]);
    expect((await req('DELETE', base)).status).toBe(200);
  });

  it("the glass protocol's refusals: an action after another app came to the front is COMPANION_REFUSED", async () => {
    await published();
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    const before = android().device.screen.xml();
    const tree = await req('GET', `${base}/a11y/tree`);
    expect(tree.status, JSON.stringify(tree.body)).toBe(200);
    const served = tree.body.package as string;
    expect(served).toBeTruthy();
    const editable = findNode(tree.body.root, (n) => n.editable);
    expect(editable).toBeDefined();
    try {
      android().device.screen.show(before.replaceAll(`package="${served}"`, 'package="com.example.other"'));
      const refused = await req('POST', `${base}/a11y/actions`, {
        ref: editable!.ref,
        action: 'set_text',
        text: 'never written',
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'COMPANION_REFUSED', retryable: false });
      expect(refused.body.error.details.reason).toContain(
        `the active window changed since the tree was served (served ${served}, now com.example.other)`,
      );
      expect(android().device.screen.xml()).not.toContain('never written');
    } finally {
      android().device.screen.show(before);
    }
    expect((await req('DELETE', base)).status).toBe(200);
  });

  it('a click taps the centre of the node on screen by default; ACTION_CLICK only with via: accessibility', async () => {
    await published();
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    const before = android().device.screen.xml();
    // A Compose screen: ACTION_CLICK on its nodes answers success and does nothing; a tap focuses the field.
    const node = (bounds: string, cls: string, extra: string, children = '') =>
      `<node index="0" text="" resource-id="" class="${cls}" package="com.example.compose" content-desc="" ` +
      `checkable="false" checked="false" focusable="true" focused="false" scrollable="false" long-clickable="false" ` +
      `password="false" selected="false" enabled="true" ${extra} bounds="${bounds}">${children}</node>`;
    const compose = node(
      '[0,0][1080,2400]',
      'android.widget.FrameLayout',
      'clickable="false"',
      node(
        '[0,0][1080,2400]',
        'androidx.compose.ui.platform.ComposeView',
        'clickable="false"',
        node('[100,400][500,520]', 'android.widget.EditText', 'clickable="true" text="name"') +
          node('[0,0][0,0]', 'android.view.View', 'clickable="true" content-desc="collapsed"') +
          node('[900,2300][1300,2600]', 'android.view.View', 'clickable="true" content-desc="half off"'),
      ),
    );
    android().device.screen.show(
      `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">${compose}</hierarchy>`,
    );
    const focused = () =>
      /class="android.widget.EditText"[^>]*focused="true"/.test(android().device.screen.xml());
    const events = () => android().device.inputEvents();
    try {
      const tree = await req('GET', `${base}/a11y/tree`);
      expect(tree.status, JSON.stringify(tree.body)).toBe(200);
      const field = findNode(tree.body.root, (n) => n.editable)!;
      const collapsed = findNode(tree.body.root, (n) => n.contentDesc === 'collapsed')!;
      const halfOff = findNode(tree.body.root, (n) => n.contentDesc === 'half off')!;

      // Asked for ACTION_CLICK: the service says done, and on Compose nothing happened.
      let seen = events().length;
      const viaA11y = await req('POST', `${base}/a11y/actions`, {
        ref: field.ref,
        action: 'click',
        via: 'accessibility',
      });
      expect(viaA11y.status, JSON.stringify(viaA11y.body)).toBe(200);
      expect(viaA11y.body).toMatchObject({ ok: true, ref: field.ref, action: 'click', via: 'accessibility' });
      expect(viaA11y.body).not.toHaveProperty('point');
      expect(
        events()
          .slice(seen)
          .map((e) => e['type'] ?? e['kind']),
      ).toEqual(['a11y-click']);
      expect(focused()).toBe(false);

      // By default: a tap at the centre of the node's bounds, and the field really is clicked.
      seen = events().length;
      const tapped = await req('POST', `${base}/a11y/actions`, { ref: field.ref, action: 'click' });
      expect(tapped.status, JSON.stringify(tapped.body)).toBe(200);
      expect(tapped.body).toMatchObject({ ok: true, action: 'click', via: 'tap', point: { x: 300, y: 460 } });
      const taps = events().slice(seen);
      expect(taps.map((e) => e['type'] ?? e['kind'])).toEqual(['swipe']); // one touch plan, no ACTION_CLICK
      expect(taps[0]).toMatchObject({
        pointers: [
          {
            samples: [
              { x: 300, y: 460 },
              { x: 300, y: 460 },
            ],
          },
        ],
      });
      expect(focused()).toBe(true);

      // Clipped to the window the tree came from: the part of the node on screen.
      const clipped = await req('POST', `${base}/a11y/actions`, { ref: halfOff.ref, action: 'click' });
      expect(clipped.body).toMatchObject({ via: 'tap', point: { x: 990, y: 2350 } });

      // Nothing on screen to tap: refused, naming the way out; ACTION_CLICK is still the caller's to ask.
      seen = events().length;
      const empty = await req('POST', `${base}/a11y/actions`, { ref: collapsed.ref, action: 'click' });
      expect(empty.status, JSON.stringify(empty.body)).toBe(400);
      expect(empty.body.error.code).toBe('INVALID_ARGUMENT');
      expect(empty.body.error.message).toContain('has empty bounds on screen');
      expect(empty.body.error.message).toContain('"via": "accessibility"');
      expect(events().slice(seen)).toEqual([]);
      const emptyViaA11y = await req('POST', `${base}/a11y/actions`, {
        ref: collapsed.ref,
        action: 'click',
        via: 'accessibility',
      });
      expect(emptyViaA11y.status, JSON.stringify(emptyViaA11y.body)).toBe(200);
    } finally {
      android().device.screen.show(before);
    }
    expect((await req('DELETE', base)).status).toBe(200);
  });

  it('the agent dying mid-request is UNAVAILABLE (retryable); the next call relaunches it', async () => {
    await published();
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    expect((await req('PUT', `${base}/clipboard`, { text: 'first' })).status).toBe(200);
    const [first] = agents();
    expect(first).toBeDefined();
    bridge.node.simulator!.devices[0]!.setFault({ glassAgentDeath: true });
    const died = await req('PUT', `${base}/clipboard`, { text: 'lost' });
    expect(died.status, JSON.stringify(died.body)).toBe(503);
    expect(died.body.error).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    expect(android().device.clipboard).toBe('first');
    const second = await req('PUT', `${base}/clipboard`, { text: 'second' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(android().device.clipboard).toBe('second');
    const now = agents();
    expect(now).toHaveLength(1);
    expect(now[0]!.pid).not.toBe(first!.pid);
    expect((await req('DELETE', base)).status).toBe(200);
    expect(agents()).toEqual([]);
  });

  for (const fault of ['glassAgentDeath', 'glassAgentDeaf'] as const) {
    it(`an agent failing (${fault}) while the reset clears the clipboard: tried again, the device goes back clean`, async () => {
      await published();
      const lease = await acquire();
      const base = `/v1/leases/${lease.id}`;
      expect((await req('PUT', `${base}/clipboard`, { text: 'tenant secret' })).status).toBe(200);
      // The lease's own agent is stopped with the lease: the reset's agent reads the fault first.
      bridge.node.simulator!.devices[0]!.setFault({ [fault]: true });
      const released = await req('DELETE', base);
      taken.delete(lease.id);
      expect(released.status, JSON.stringify(released.body)).toBe(200);
      expect(released.body.teardown.failures).toEqual([]);
      expect(bridge.node.simulator!.devices[0]!.faults[fault]).toBeUndefined(); // it fired
      expect(android().device.clipboard).toBe('');
      const record = (await req('GET', '/v1/devices', undefined, ADMIN_TOKEN)).body.devices[0];
      expect(record.state).toBe('online');
      expect(agents()).toEqual([]);
    });
  }

  it('bad input is INVALID_ARGUMENT naming the field, before the device is touched', async () => {
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', 'keys', { chord: 'ctrl+nosuchkey' }, 'unknown key "nosuchkey"'],
      ['POST', 'text', { text: 'a\ud800b' }, 'well-formed Unicode'],
      ['POST', 'text', { text: 'x'.repeat(70_000) }, 'at most 65536 bytes'],
      ['POST', 'text', { text: 5 }, 'text'],
      ['PUT', 'clipboard', {}, 'text'],
      ['POST', 'pointer', { gesture: [] }, 'gesture'],
      ['POST', 'pointer', { gesture: [{ x: 1e9, y: 0, t_ms: 0 }] }, 'gesture.0.x'],
      [
        'POST',
        'pointer',
        {
          gesture: [
            { x: 0, y: 0, t_ms: 10 },
            { x: 0, y: 0, t_ms: 5 },
          ],
        },
        'must not be earlier',
      ],
      ['POST', 'a11y/actions', { ref: 'e1', action: 'set_text' }, 'required for set_text'],
      ['POST', 'a11y/actions', { ref: 'x1', action: 'click' }, 'is not a node ref'],
      ['POST', 'a11y/actions', { ref: 'e1', action: 'tap' }, 'action'],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await req(method, `${base}/${path}`, body);
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      expect(res.body.error.code).toBe('INVALID_ARGUMENT');
      expect(res.body.error.message).toContain(message);
    }
    const query = await req('GET', `${base}/a11y/tree?format=xml`);
    expect(query.status).toBe(400);
    expect(agents()).toEqual([]);
    expect((await req('DELETE', base)).status).toBe(200);
  });

  it("another tenant cannot reach a lease's companions (NOT_FOUND)", async () => {
    await published();
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    expect((await req('PUT', `${base}/clipboard`, { text: 'mine' })).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', 'clipboard', undefined],
      ['PUT', 'clipboard', { text: 'theirs' }],
      ['POST', 'text', { text: 'x' }],
      ['POST', 'keys', { chord: 'enter' }],
      ['POST', 'pointer', { gesture: [{ x: 1, y: 1, t_ms: 0 }] }],
      ['GET', 'a11y/tree', undefined],
      ['POST', 'a11y/actions', { ref: 'e1', action: 'click' }],
    ] as const) {
      const res = await req(method, `${base}/${path}`, body, OTHER_TENANT_TOKEN);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect(android().device.clipboard).toBe('mine');
    expect((await req('DELETE', base)).status).toBe(200);
  });

  it('a new agent release mid-lease restarts the agent', async () => {
    await published();
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    expect((await req('GET', `${base}/clipboard`)).status).toBe(200);
    const first = agents().map((p) => p.pid);
    expect(first).toHaveLength(1);
    await publishGlassAgent(bridge.services.store, tmp.dir, { version: '1.1.0', extra: ['dev.x.Extra'] });
    expect((await req('GET', `${base}/clipboard`)).status).toBe(200);
    await expect.poll(() => agents().map((p) => p.pid), { timeout: 10_000 }).toHaveLength(1);
    expect(first).not.toContain(agents()[0]!.pid);
    expect((await req('DELETE', base)).status).toBe(200);
    await expect.poll(() => agents().length, { timeout: 10_000 }).toBe(0);
  });

  it('a release racing the companions starting: the operations end LEASE_EXPIRED, nothing is left', async () => {
    await published();
    const prior = secure('enabled_accessibility_services');
    for (const delayMs of [0, 30, 120]) {
      const lease = await acquire();
      const base = `/v1/leases/${lease.id}`;
      const tree = req('GET', `${base}/a11y/tree`);
      const clip = req('GET', `${base}/clipboard`);
      await new Promise((r) => setTimeout(r, delayMs));
      const released = await req('DELETE', base);
      expect(released.status).toBe(200);
      expect(released.body.teardown.failures, `delay ${delayMs}`).toEqual([]);
      const answers = await Promise.all([tree, clip]);
      for (const answer of answers) {
        // Finished before the release (200) or cancelled by it: never a result after the lease ended.
        if (answer.status !== 200)
          expect(answer.body.error.code, JSON.stringify(answer.body)).toBe('LEASE_EXPIRED');
      }
      expect(leaseForwards(lease.id)).toEqual([]);
      await expect.poll(() => agents().length, { timeout: 10_000 }).toBe(0);
      expect(secure('enabled_accessibility_services')).toBe(prior);
    }
  });

  it('a glass call to another node is forwarded to the node that drives the device', async () => {
    await published();
    await bridge.node.announce(http.url);
    const other = await testDeviceBridge({
      auth: testTokens(),
      simulate: 0,
      redisPrefix: PREFIX,
      env: { DEVICEBRIDGE_NODE: 'glass-b' },
    });
    try {
      const lease = await acquire();
      const set = await other.app.request(`/v1/leases/${lease.id}/clipboard`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ text: 'through node b ✓' }),
      });
      expect(set.status, await set.clone().text()).toBe(200);
      expect(set.headers.get('x-devicebridge-forwarded-by')).toBe('glass-a');
      expect(android().device.clipboard).toBe('through node b ✓');
      const tree = await other.app.request(`/v1/leases/${lease.id}/a11y/tree?format=raw`, {
        headers: { Authorization: `Bearer ${CLIENT_TOKEN}` },
      });
      expect(tree.status).toBe(200);
      expect(((await tree.json()) as { format: string }).format).toBe('raw');
    } finally {
      await other.cleanup();
    }
  }, 120_000);

  it('the typed client', async () => {
    await published();
    const client = new DeviceBridgeClient({ baseUrl: http.url, token: CLIENT_TOKEN });
    const lease = await client.acquireLease({ selector: {}, waitSeconds: 20 });
    taken.add(lease.id);
    await client.setClipboard(lease.id, 'from the client ✓');
    expect(await client.clipboard(lease.id)).toEqual({ text: 'from the client ✓' });
    expect(await client.typeText(lease.id, 'typed')).toMatchObject({ ok: true });
    expect(await client.pressKeys(lease.id, 'shift+tab')).toMatchObject({ ok: true });
    expect(await client.pointer(lease.id, [{ x: 5, y: 5, t_ms: 0 }])).toMatchObject({ ok: true });
    const tree = await client.a11yTree(lease.id);
    expect(tree.root.ref).toBe('e1');
    const raw = await client.a11yTree(lease.id, { format: 'raw' });
    expect(raw.tree['ref']).toBe(0);
    const clickable = findNode(tree.root, (n) => n.clickable && n.enabled)!;
    expect(await client.a11yAction(lease.id, { ref: clickable.ref, action: 'click' })).toMatchObject({
      ok: true,
      ref: clickable.ref,
    });
    await expect(client.pressKeys(lease.id, 'ctrl+')).rejects.toMatchObject({
      status: 400,
      code: 'INVALID_ARGUMENT',
    });
    const released = await client.releaseLease(lease.id);
    expect(released.teardown!.actions).toContain(`stopped glass agent on ${serial()}`);
  });

  it('the CLI: clipboard get|set, type, key, a11y tree|set-text|click with --lease and --json', async () => {
    await published();
    const env = { DEVICEBRIDGE_URL: http.url, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN };
    const cli = (...args: string[]) => runCli(args, { env, timeoutMs: 60_000 });
    const acquired = await cli('lease', 'acquire', '--wait', '20', '--json');
    expect(acquired.code, acquired.stderr).toBe(0);
    const id = (JSON.parse(acquired.stdout) as { id: string }).id;
    taken.add(id);

    const set = await cli('clipboard', 'set', '--lease', id, 'CLI 👋 שלום', '--json');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ ok: true });
    const get = await cli('clipboard', 'get', '--lease', id);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toBe('CLI 👋 שלום\n');
    expect((await cli('type', '--lease', id, 'typed by the CLI')).code).toBe(0);
    expect((await cli('key', '--lease', id, 'enter', '--json')).code).toBe(0);
    const badKey = await cli('key', '--lease', id, 'ctrl+nosuchkey');
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('INVALID_ARGUMENT');

    const tree = await cli('a11y', 'tree', '--lease', id, '--json');
    expect(tree.code, tree.stderr).toBe(0);
    const normalized = JSON.parse(tree.stdout) as { root: Node };
    expect(normalized.root.ref).toBe('e1');
    const raw = await cli('a11y', 'tree', '--lease', id, '--raw', '--json');
    expect(JSON.parse(raw.stdout)).toMatchObject({ format: 'raw', tree: { ref: 0 } });
    const clickable = findNode(normalized.root, (n) => n.clickable && n.enabled)!;
    const click = await cli('a11y', 'click', '--lease', id, clickable.ref, '--json');
    expect(click.code, click.stderr).toBe(0);
    expect(JSON.parse(click.stdout)).toMatchObject({
      ok: true,
      ref: clickable.ref,
      action: 'click',
      via: 'tap',
    });
    const viaA11y = await cli('a11y', 'click', '--lease', id, clickable.ref, '--accessibility');
    expect(viaA11y.code, viaA11y.stderr).toBe(0);
    expect(viaA11y.stdout).toContain(`clicked ${clickable.ref} (ACTION_CLICK)`);
    const notEditable = findNode(normalized.root, (n) => !n.editable)!;
    const setText = await cli('a11y', 'set-text', '--lease', id, notEditable.ref, 'from CLI', '--json');
    expect(setText.code).toBe(1);
    expect(JSON.parse(setText.stdout)).toMatchObject({
      ok: false,
      error: { code: 'COMPANION_REFUSED', status: 409 },
    });
    expect((await cli('pointer', '--lease', id, '10,10,0', '20,20,50')).code).toBe(0);
    expect((await cli('pointer', '--lease', id, '10,10')).code).toBe(2);
    const released = await cli('lease', 'release', id);
    expect(released.code).toBe(0);
    expect(released.stdout).toContain('stopped glass agent');
  }, 120_000);

  // The simulator's screen model: the agent's `text` appends to the focused EditText and `set_text`
  // replaces a node's text, so the next dump and the next tree show them.
  it('Unicode round trip: type, then the next snapshot and the next a11y tree show the text; set_text too', async () => {
    await published();
    const typed = 'héllo 👋 你好 שלום e\u0301';
    const lease = await acquire();
    const base = `/v1/leases/${lease.id}`;
    expect((await req('POST', `${base}/text`, { text: typed })).status).toBe(200);
    const snapshot = await req('POST', `${base}/snapshot`, { format: 'json' });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(200);
    const shown = JSON.stringify(snapshot.body.snapshot).includes(JSON.stringify(typed).slice(1, -1));
    expect(shown, 'the next snapshot shows the typed text').toBe(true);
    const tree = await req('GET', `${base}/a11y/tree`);
    const withText = findNode(
      tree.body.root,
      (n) => n.editable && (n as Node & { text: string }).text.includes(typed),
    );
    expect(withText, 'the next a11y tree shows the typed text').toBeDefined();
    const replaced = '新しい 👩🏽‍💻 טקסט';
    const set = await req('POST', `${base}/a11y/actions`, {
      ref: withText!.ref,
      action: 'set_text',
      text: replaced,
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const after = await req('GET', `${base}/a11y/tree`);
    expect(findNode(after.body.root, (n) => n.ref === withText!.ref)).toMatchObject({ text: replaced });
    const xml = await req('POST', `${base}/snapshot`, { format: 'xml' });
    expect(xml.body.xml).toContain(replaced);
  });
});

interface Node {
  ref: string;
  rawRef: number;
  contentDesc: string;
  editable: boolean;
  enabled: boolean;
  clickable: boolean;
  children: Node[];
}

function findNode(root: Node, pick: (n: Node) => boolean): Node | undefined {
  if (pick(root)) return root;
  for (const c of root.children) {
    const found = findNode(c, pick);
    if (found) return found;
  }
  return undefined;
}

describe('glass companions: contract', () => {
  it('the answers above covered every glass route, and each parsed with its response schema', () => {
    const glass = new Set(GLASS_ROUTES.map((r) => r.operationId));
    expect([...checkedOperations].filter((id) => glass.has(id)).sort()).toEqual([...glass].sort());
  });
});
