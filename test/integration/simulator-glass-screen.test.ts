/**
 * One device model behind the glass companions and the snapshot helper, end to end through the real
 * adb server with the bridge's own drivers: the agent's `text` lands in the focused EditText and the
 * NEXT snapshot (one-shot and session) shows exactly the code points typed; backspace removes one
 * code point; on a `--ui` screen typing goes to the first editable node until an a11y `click` moves
 * the focus (so does a tap through the agent or the snapshot helper), and `set_text` replaces — the next snapshot and the
 * next a11y tree agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GlassA11y } from '../../src/helpers/glass/a11y-driver.ts';
import { GlassAgent } from '../../src/helpers/glass/agent-driver.ts';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import { EnsureVerdicts, ensureHelper } from '../../src/helpers/snapshot/ensure-helper.ts';
import { buildTap } from '../../src/protocol/helper/touch-plan.ts';
import type { SimulatorOptions } from '../../src/simulator/index.ts';
import { normalizeSnapshot, type SnapshotNode } from '../../src/snapshot/normalize.ts';
import { tempDir } from '../support/bridge.ts';
import {
  type A11yTreeNode,
  a11yFixtureManifest,
  fixtureApk,
  fixtureManifest,
  flattenA11yTree,
  glassAgentFixture,
  startDeviceBed,
} from '../support/device-bed.ts';

const HELPER = 'snapshot-helper-v1.apk';

/** A device bed with the snapshot helper ensured and the glass agent running. */
async function glassBed(sim: SimulatorOptions = {}) {
  const bed = await startDeviceBed(sim);
  const tmp = await tempDir();
  const manifest = fixtureManifest(HELPER);
  const snapshots = new SnapshotDriver(bed.device(), manifest, {
    verdicts: new EnsureVerdicts(),
    apk: fixtureApk(bed.cache, HELPER, manifest),
    owner: 'lease-screen',
  });
  await snapshots.ensure();
  const { jarPath, manifest: agentManifest } = await glassAgentFixture(tmp.dir);
  const { agent } = await GlassAgent.start({
    device: bed.device(),
    manifest: agentManifest,
    jarPath,
    owner: 'lease-screen',
    intervalMs: 50,
  });
  return {
    bed,
    snapshots,
    agent,
    /** The nodes of the next snapshot over `transport`, as the bridge normalizes them. */
    nodes: async (transport: 'one-shot' | 'session'): Promise<SnapshotNode[]> =>
      normalizeSnapshot((await snapshots.snapshot({ transport })).xml).nodes,
    async close() {
      await agent.close();
      await snapshots.close();
      await bed.close();
      await tmp.cleanup();
    },
  };
}

describe('built-in screen: type → the next snapshot', () => {
  let g: Awaited<ReturnType<typeof glassBed>>;
  beforeAll(async () => {
    g = await glassBed();
  }, 60_000);
  afterAll(async () => g?.close());

  const folderName = async (transport: 'one-shot' | 'session') =>
    (await g.nodes(transport)).find((n) => n.resourceId === 'com.example.notes:id/folder_name');

  it('shows the typed code points in the focused EditText, one-shot and session; backspace drops one', async () => {
    expect(await folderName('session')).toMatchObject({ text: 'Trips & "ideas"', focused: true });
    // Emoji with a skin tone (two code points), CJK, RTL, a combining mark, XML's own characters.
    const typed = ' 👋🏽 日本語 עברית e\u0301 <a & "b">';
    expect(await g.agent.request('text', { text: typed })).toMatchObject({ ok: true });
    expect((await folderName('one-shot'))?.text).toBe(`Trips & "ideas"${typed}`);
    expect((await folderName('session'))?.text).toBe(`Trips & "ideas"${typed}`);

    expect(await g.agent.request('key', { chord: 'backspace' })).toMatchObject({ ok: true });
    const lessOne = `Trips & "ideas"${typed.slice(0, -1)}`;
    expect((await folderName('session'))?.text).toBe(lessOne);
    expect(await g.agent.request('key', { chord: 'ctrl+a' })).toMatchObject({ ok: true }); // accepted, no change
    expect((await folderName('one-shot'))?.text).toBe(lessOne);
    // Backspace over a surrogate pair removes the whole code point, never half of it.
    await g.agent.request('text', { text: '🚀' });
    await g.agent.request('key', { chord: 'backspace' });
    expect((await folderName('session'))?.text).toBe(lessOne);
    // Forward delete ("del", KEYCODE_FORWARD_DEL) with the cursor at the end erases nothing, as on a device.
    expect(await g.agent.request('key', { chord: 'del' })).toMatchObject({ ok: true });
    expect((await folderName('one-shot'))?.text).toBe(lessOne);
  });
});

/** Two editable fields, nothing focused, attributes in uiautomator's order. */
const FORM = [
  "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
  '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.form" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,0][1080,2400]">',
  '<node index="0" text="" resource-id="com.example.form:id/name" class="android.widget.EditText" package="com.example.form" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true" password="false" selected="false" visible-to-user="true" bounds="[0,100][1080,250]" />',
  '<node index="1" text="" resource-id="com.example.form:id/city" class="android.widget.AutoCompleteTextView" package="com.example.form" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true" password="false" selected="false" visible-to-user="true" bounds="[0,300][1080,450]" />',
  '<node index="2" text="Save" resource-id="com.example.form:id/save" class="android.widget.Button" package="com.example.form" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,500][1080,650]" />',
  '</node></hierarchy>',
].join('');

describe('--ui screen: typing follows the focus an a11y click gives; set_text replaces', () => {
  let g: Awaited<ReturnType<typeof glassBed>>;
  let a11y: GlassA11y;
  beforeAll(async () => {
    g = await glassBed({ ui: FORM });
    const manifest = a11yFixtureManifest();
    await ensureHelper(g.bed.device(), manifest, new EnsureVerdicts(), {
      apk: fixtureApk(g.bed.cache, 'a11y-service.apk', manifest),
    });
    ({ a11y } = await GlassA11y.enable({
      device: g.bed.device(),
      manifest,
      journal: { save: async () => undefined },
      owner: 'lease-screen',
      pollMs: 50,
    }));
  }, 60_000);
  afterAll(async () => {
    await a11y?.close();
    await g?.close();
  });

  const field = (nodes: SnapshotNode[], id: string) =>
    nodes.find((n) => n.resourceId === `com.example.form:id/${id}`);

  it('types into the first editable node, then into the one a click focused; trees and snapshots agree', async () => {
    await g.agent.request('text', { text: 'Ada' });
    let nodes = await g.nodes('session');
    expect(field(nodes, 'name')).toMatchObject({ text: 'Ada', focused: false });
    expect(field(nodes, 'city')).toMatchObject({ text: '', focused: false });

    const tree = flattenA11yTree(
      (await a11y.request('tree', { package: 'com.example.form' }))['tree'] as A11yTreeNode,
    );
    const city = tree.find((n) => n.class === 'android.widget.AutoCompleteTextView')!;
    const save = tree.find((n) => n.class === 'android.widget.Button')!;
    expect(await a11y.request('action', { ref: city.ref, action: 'click' })).toMatchObject({ ok: true });
    await g.agent.request('text', { text: 'Zürich 🇨🇭' });
    nodes = await g.nodes('one-shot');
    expect(field(nodes, 'city')).toMatchObject({ text: 'Zürich 🇨🇭', focused: true });
    expect(field(nodes, 'name')).toMatchObject({ text: 'Ada', focused: false });

    await a11y.request('action', { ref: city.ref, action: 'set_text', text: 'القاهرة' });
    await expect(
      a11y.request('action', { ref: save.ref, action: 'set_text', text: 'x' }),
    ).rejects.toMatchObject({
      code: 'HELPER_FAILED',
      details: { deviceError: `set_text was refused by ref ${save.ref}` },
    });
    expect(field(await g.nodes('session'), 'city')?.text).toBe('القاهرة');
    const again = flattenA11yTree(
      (await a11y.request('tree', { package: 'com.example.form' }))['tree'] as A11yTreeNode,
    );
    expect(again.find((n) => n.ref === city.ref)?.text).toBe('القاهرة');
    expect(again.find((n) => n.ref === save.ref)?.text).toBe('Save');

    // A tap through the agent (how glass clicks an element: on its bounds) moves the focus back.
    const tap = [
      { x: 540, y: 175, t_ms: 0 },
      { x: 541, y: 176, t_ms: 60 },
    ];
    expect(await g.agent.request('pointer', { gesture: tap, button: 'left' })).toMatchObject({ ok: true });
    await g.agent.request('text', { text: ' Lovelace' });
    nodes = await g.nodes('session');
    expect(field(nodes, 'name')).toMatchObject({ text: 'Ada Lovelace', focused: true });
    expect(field(nodes, 'city')).toMatchObject({ text: 'القاهرة', focused: false });

    // So does a tap the snapshot helper injects (the bridge's gesture route).
    await g.snapshots.gesture(buildTap(540, 375), { transport: 'session' });
    await g.agent.request('key', { chord: 'backspace' });
    expect(field(await g.nodes('one-shot'), 'city')).toMatchObject({ text: 'القاهر', focused: true });
  });
});
