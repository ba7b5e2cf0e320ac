/**
 * The simulator's glass agent through the real adb server, as the bridge will drive it: push the
 * dex jar, start it with `CLASSPATH=… app_process / Main` on a held shell, forward
 * `localabstract:glass-agent`, read the banner, talk; one client at a time; a second agent finds
 * the socket taken; closing the shell stops the agent. The seed's quirks (malformed requests,
 * unknown ops, the upstream agent's silent success on an unknown key name) and the glass fault
 * knobs (agent death mid-request, a11y unbinding, a torn reply line), switched at run time through
 * the in-process API and the control port.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { type ControlServer, startControlServer } from '../../src/simulator/control.ts';
import { type SimulatedDevice, type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { fixture } from '../support/bridge.ts';
import { type A11yTreeNode, flattenA11yTree } from '../support/device-bed.ts';
import { buildDexJar } from '../support/dex-jar.ts';
import { type AdbServer, startAdbServer } from './support/adb-server.ts';

const MAIN = 'dev.devicebridge.glassagent.Main';
const UPSTREAM_MAIN = 'com.fixedwidth.glassagent.Main';
const UPSTREAM_JAR = '/data/local/tmp/glass-agent-upstream.jar';
const A11Y_APK = fixture('a11y-service.apk');
const A11Y_COMPONENT = 'dev.glass.a11y/.GlassAccessibilityService';
const JAR = '/data/local/tmp/glass-agent.jar';
let sim: Simulator;
let server: AdbServer;
let device: SimulatedDevice;
let dir: string;
let control: ControlServer;

/** A line client on a forwarded port: `next()` resolves with the next reply line. */
function lineClient(
  port: number,
): Promise<{ socket: Socket; next(): Promise<string>; send(line: string): void }> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1');
    const lines: string[] = [];
    const waiters: Array<(l: string) => void> = [];
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffer += text;
      for (let i = buffer.indexOf('\n'); i !== -1; i = buffer.indexOf('\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        const waiter = waiters.shift();
        if (waiter) waiter(line);
        else lines.push(line);
      }
    });
    socket.on('error', reject);
    socket.on('connect', () =>
      resolve({
        socket,
        send: (line) => socket.write(`${line}\n`),
        next: () =>
          new Promise<string>((res) => {
            const line = lines.shift();
            if (line !== undefined) res(line);
            else waiters.push(res);
          }),
      }),
    );
  });
}

/** The agent on a held `adb shell`; `exit` resolves with the shell's exit status. */
async function launchAgent(main = MAIN, jar = JAR): Promise<{ kill(): void; exit: Promise<number | null> }> {
  const agent = spawn('adb', ['-s', device.serial, 'shell', `CLASSPATH=${jar} app_process / ${main}`], {
    env: server.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = new Promise<number | null>((resolve) => agent.once('exit', (code) => resolve(code)));
  agent.stdout.resume();
  agent.stderr.resume();
  await expect
    .poll(() => device.android.listening(), { timeout: 10_000 })
    .toContain('localabstract:glass-agent');
  return { kill: () => agent.kill(), exit };
}

const agentGone = () =>
  expect
    .poll(() => device.android.listening(), { timeout: 10_000 })
    .not.toContain('localabstract:glass-agent');

/** Switch faults through the control port (PATCH adds, DELETE lifts one by its spec name). */
async function controlFault(method: 'PATCH' | 'DELETE', spec: string): Promise<void> {
  const res = await fetch(`${control.url}/devices/0/faults${method === 'DELETE' ? `/${spec}` : ''}`, {
    method,
    ...(method === 'PATCH' ? { body: JSON.stringify({ faults: [spec] }) } : {}),
  });
  expect(res.status).toBe(200);
}

async function forward(socket = 'glass-agent'): Promise<number> {
  const out = await server.adb(['-s', device.serial, 'forward', 'tcp:0', `localabstract:${socket}`]);
  return Number(out.stdout.toString().trim());
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sim-glass-'));
  sim = await startSimulator({ port: 0, count: 1 });
  device = sim.devices[0]!;
  server = await startAdbServer();
  await server.connect(device.address);
  const jar = join(dir, 'glass-agent.jar');
  await writeFile(jar, buildDexJar([MAIN, 'dev.devicebridge.glassagent.core.AgentProtocol']));
  expect((await server.adb(['-s', device.serial, 'push', jar, JAR])).code).toBe(0);
  const upstream = join(dir, 'glass-agent-upstream.jar');
  await writeFile(upstream, buildDexJar([UPSTREAM_MAIN]));
  expect((await server.adb(['-s', device.serial, 'push', upstream, UPSTREAM_JAR])).code).toBe(0);
  control = await startControlServer(sim.devices, 0);
});

afterAll(async () => {
  await control?.close();
  await server?.stop();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('glass agent on a simulated device', () => {
  it('starts under app_process, answers over a forward, and stops with its shell', async () => {
    device.android.device.clipboard = 'from the device';
    const agent = spawn('adb', ['-s', device.serial, 'shell', `CLASSPATH=${JAR} app_process / ${MAIN}`], {
      env: server.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const agentOut: string[] = [];
    agent.stdout.setEncoding('utf8').on('data', (t: string) => agentOut.push(t));
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .toContain('localabstract:glass-agent');
    const port = await forward();
    const client = await lineClient(port);
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    expect(agentOut.join('')).toBe('glass-agent listening on localabstract:glass-agent\n');
    client.send('{"id":1,"op":"clipboard_get"}');
    expect(await client.next()).toBe('{"id":1,"ok":true,"text":"from the device"}');
    client.send('{"id":2,"op":"clipboard_set","text":"Grüße 👋"}');
    expect(await client.next()).toBe('{"id":2,"ok":true}');
    expect(device.android.device.clipboard).toBe('Grüße 👋');
    client.send('{"id":3,"op":"key","chord":"ctrl+v"}');
    expect(await client.next()).toBe('{"id":3,"ok":true}');
    client.send('not json');
    expect(await client.next()).toBe('{"id":-1,"ok":false,"error":"malformed request"}');
    client.send('{"id":4,"op":"teleport"}');
    expect(await client.next()).toBe('{"id":4,"ok":false,"error":"unknown op: teleport"}');
    client.send('{"id":5,"op":"key","chord":"ctrl+nosuchkey"}'); // ours refuses an unknown key name
    expect(await client.next()).toBe(
      '{"id":5,"ok":false,"error":"unknown key \\"nosuchkey\\" in key chord \\"ctrl+nosuchkey\\""}',
    );

    // One client at a time: a second one gets its banner only when the first leaves.
    const second = await lineClient(port);
    const banner = second.next();
    const raced = await Promise.race([banner, new Promise((r) => setImmediate(() => r('waiting')))]);
    expect(raced).toBe('waiting');
    client.socket.end();
    expect(await banner).toBe('{"hello":{"proto":1}}');
    second.send('{"id":9,"op":"ping"}');
    expect(await second.next()).toBe('{"id":9,"ok":true}');

    // A second agent finds the socket taken.
    const again = await server.adb(['-s', device.serial, 'shell', `CLASSPATH=${JAR} app_process / ${MAIN}`]);
    expect(again.code).toBe(1);
    expect(again.stderr.toString()).toContain('Address already in use');

    second.socket.destroy();
    agent.kill();
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .not.toContain('localabstract:glass-agent');
  });

  it("the glass contract's upstream agent: an unknown key name is a silent success (nothing injected)", async () => {
    const agent = await launchAgent(UPSTREAM_MAIN, UPSTREAM_JAR);
    const client = await lineClient(await forward());
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    const android = device.android as SimAndroidHandle;
    const events = android.inputEvents().length;
    client.send('{"id":1,"op":"key","chord":"nosuchkey"}');
    expect(await client.next()).toBe('{"id":1,"ok":true}');
    expect(android.inputEvents()).toHaveLength(events);
    client.send('{"id":2,"op":"key","chord":"hyper+a"}'); // an unknown modifier is still refused
    expect(await client.next()).toBe(
      '{"id":2,"ok":false,"error":"unknown modifier \\"hyper\\" in key chord \\"hyper+a\\""}',
    );
    client.socket.destroy();
    agent.kill();
    await agentGone();
  });

  it('a streamed touch: each event recorded as it comes (the screen shows the finger while it is down); a finger left down is cancelled when its connection ends', async () => {
    const agent = await launchAgent();
    const android = device.android as SimAndroidHandle;
    const touches = (from: number) =>
      android
        .inputEvents()
        .slice(from)
        .filter((e) => e['type'] === 'glass-touch');
    const client = await lineClient(await forward());
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    const from = android.inputEvents().length;
    client.send('{"id":1,"op":"touch","action":"down","x":300,"y":1500}');
    expect(await client.next()).toBe('{"id":1,"ok":true}');
    expect(touches(from)).toEqual([{ type: 'glass-touch', action: 'down', x: 300, y: 1500 }]);
    client.send('{"id":2,"op":"touch","action":"move","x":300,"y":1200}');
    expect(await client.next()).toBe('{"id":2,"ok":true}');
    expect(touches(from).at(-1)).toEqual({ type: 'glass-touch', action: 'move', x: 300, y: 1200 });
    client.send('{"id":3,"op":"touch","action":"up","x":300,"y":1100}');
    expect(await client.next()).toBe('{"id":3,"ok":true}');
    client.send('{"id":4,"op":"touch","action":"move","x":1,"y":1}');
    expect(await client.next()).toBe('{"id":4,"ok":false,"error":"touch move without a touch down"}');
    // A finger down, then the client goes away: the agent cancels it where it last was.
    client.send('{"id":5,"op":"touch","action":"down","x":500,"y":600}');
    expect(await client.next()).toBe('{"id":5,"ok":true}');
    client.send('{"id":6,"op":"touch","action":"move","x":520,"y":640}');
    expect(await client.next()).toBe('{"id":6,"ok":true}');
    client.socket.end();
    await expect
      .poll(() => touches(from).at(-1), { timeout: 10_000 })
      .toEqual({
        type: 'glass-touch',
        action: 'cancel',
        x: 520,
        y: 640,
      });
    expect(touches(from).map((e) => e['action'])).toEqual(['down', 'move', 'up', 'down', 'move', 'cancel']);
    agent.kill();
    await agentGone();
  });

  it('an agent that ends with a finger down injects nothing more: a killed process cannot release it', async () => {
    const agent = await launchAgent();
    const android = device.android as SimAndroidHandle;
    const client = await lineClient(await forward());
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    const from = android.inputEvents().length;
    client.send('{"id":1,"op":"touch","action":"down","x":10,"y":20}');
    expect(await client.next()).toBe('{"id":1,"ok":true}');
    agent.kill();
    await agentGone();
    expect(android.inputEvents().slice(from)).toEqual([
      { type: 'glass-touch', action: 'down', x: 10, y: 20 },
    ]);
    client.socket.destroy();
  });

  it("the glass contract's upstream agent has no touch op: an unknown op, nothing injected", async () => {
    const agent = await launchAgent(UPSTREAM_MAIN, UPSTREAM_JAR);
    const client = await lineClient(await forward());
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    const android = device.android as SimAndroidHandle;
    const events = android.inputEvents().length;
    client.send('{"id":1,"op":"touch","action":"down","x":1,"y":2}');
    expect(await client.next()).toBe('{"id":1,"ok":false,"error":"unknown op: touch"}');
    expect(android.inputEvents()).toHaveLength(events);
    client.socket.destroy();
    agent.kill();
    await agentGone();
  });

  it('glass-agent-death: the agent dies on the request, no reply, its process and socket gone', async () => {
    const agent = await launchAgent();
    const client = await lineClient(await forward());
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    client.send('{"id":1,"op":"ping"}');
    expect(await client.next()).toBe('{"id":1,"ok":true}');
    const waiting = await lineClient(await forward()); // queued behind the first client: dropped too
    const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()));
    const received: string[] = [];
    client.socket.on('data', (d: string) => received.push(d));
    device.setFault({ glassAgentDeath: true });
    client.send('{"id":2,"op":"clipboard_get"}');
    await closed;
    expect(received).toEqual([]);
    expect(await agent.exit).toBe(137);
    expect(device.android.listening()).not.toContain('localabstract:glass-agent');
    expect((device.android as SimAndroidHandle).device.processes()).toEqual([]);
    expect(device.faults.glassAgentDeath).toBeUndefined(); // one shot: a new agent lives
    await new Promise<void>((resolve) =>
      waiting.socket.destroyed ? resolve() : waiting.socket.once('close', () => resolve()),
    );
    const again = await launchAgent();
    const next = await lineClient(await forward());
    expect(await next.next()).toBe('{"hello":{"proto":1}}');
    next.send('{"id":3,"op":"ping"}');
    expect(await next.next()).toBe('{"id":3,"ok":true}');
    next.socket.destroy();
    again.kill();
    await agentGone();
  });

  it('glass-malformed (control port): the next reply line is torn garbage, the one after is whole', async () => {
    const agent = await launchAgent();
    const client = await lineClient(await forward());
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    await controlFault('PATCH', 'glass-malformed');
    client.send('{"id":1,"op":"ping"}');
    const torn = await client.next();
    expect(torn).toBe('{"id":1,"'); // the first half of {"id":1,"ok":true}
    expect(() => JSON.parse(torn)).toThrow();
    client.send('{"id":2,"op":"ping"}');
    expect(await client.next()).toBe('{"id":2,"ok":true}');
    expect(device.faults.glassMalformed).toBeUndefined();
    client.socket.destroy();
    agent.kill();
    await agentGone();
  });

  it('refuses a jar that is missing or does not define the main class', async () => {
    const missing = await server.adb([
      '-s',
      device.serial,
      'shell',
      `CLASSPATH=/data/local/tmp/nope.jar app_process / ${MAIN}`,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.toString()).toContain(`ClassNotFoundException: Didn't find class "${MAIN}"`);
    const other = await server.adb([
      '-s',
      device.serial,
      'shell',
      `CLASSPATH=${JAR} app_process / dev.other.Main`,
    ]);
    expect(other.code).toBe(1);
    expect(device.android.listening()).not.toContain('localabstract:glass-agent');
  });
});

describe('glass a11y service on a simulated device', () => {
  const shell = async (command: string) => {
    const r = await server.adb(['-s', device.serial, 'shell', command]);
    return { code: r.code, out: r.stdout.toString() };
  };

  it('binds once installed and enabled in secure settings, serves the screen, unbinds when the settings are restored', async () => {
    expect((await server.adb(['-s', device.serial, 'install', '-t', A11Y_APK])).code).toBe(0);
    expect(device.android.listening()).not.toContain('localabstract:glass-a11y');
    expect((await shell(`settings put secure enabled_accessibility_services ${A11Y_COMPONENT}`)).code).toBe(
      0,
    );
    // Not yet: accessibility_enabled is still 0.
    expect(device.android.listening()).not.toContain('localabstract:glass-a11y');
    expect((await shell('settings put secure accessibility_enabled 1')).code).toBe(0);
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .toContain('localabstract:glass-a11y');

    const port = await forward('glass-a11y');
    const client = await lineClient(port);
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    client.send('{"id":1,"op":"action","ref":0,"action":"click"}');
    expect(await client.next()).toBe(
      '{"id":1,"ok":false,"error":"no tree has been served on this connection"}',
    );
    client.send('{"id":2,"op":"tree","package":"any"}');
    const reply = JSON.parse(await client.next()) as {
      id: number;
      ok: boolean;
      tree: { ref: number; class: string };
      package?: string;
    };
    expect(reply).toMatchObject({ id: 2, ok: true, tree: { ref: 0 } });
    expect(typeof reply.package).toBe('string');
    client.socket.destroy();

    // Restoring the settings unbinds the service; so does uninstalling its package.
    expect((await shell('settings delete secure enabled_accessibility_services')).code).toBe(0);
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .not.toContain('localabstract:glass-a11y');
    expect((await shell(`settings put secure enabled_accessibility_services ${A11Y_COMPONENT}`)).code).toBe(
      0,
    );
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .toContain('localabstract:glass-a11y');
    expect((await server.adb(['-s', device.serial, 'uninstall', 'dev.glass.a11y'])).code).toBe(0);
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .not.toContain('localabstract:glass-a11y');
    await shell('settings delete secure enabled_accessibility_services');
    await shell('settings put secure accessibility_enabled 0');
  });

  it('does not bind a component the package does not declare as an accessibility service', async () => {
    expect((await server.adb(['-s', device.serial, 'install', '-t', A11Y_APK])).code).toBe(0);
    await shell('settings put secure accessibility_enabled 1');
    await shell('settings put secure enabled_accessibility_services dev.glass.a11y/.NotAService');
    const android = device.android as SimAndroidHandle;
    expect(android.runtime.settings.get('secure', 'enabled_accessibility_services')).toBe(
      'dev.glass.a11y/.NotAService',
    );
    // The bind decision itself (binding is asynchronous: no waiting for something not to happen).
    expect(android.glassA11y.bindable()).toBe(false);
    await shell(
      `settings put secure enabled_accessibility_services dev.glass.a11y/.NotAService:${A11Y_COMPONENT}`,
    );
    expect(android.glassA11y.bindable()).toBe(true);
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .toContain('localabstract:glass-a11y');
    await shell('settings delete secure enabled_accessibility_services');
    await shell('settings put secure accessibility_enabled 0');
  });

  /** Install and enable the service, wait until it listens; returns a connected client past the banner. */
  async function boundClient() {
    expect((await server.adb(['-s', device.serial, 'install', '-r', '-t', A11Y_APK])).code).toBe(0);
    await shell(`settings put secure enabled_accessibility_services ${A11Y_COMPONENT}`);
    await shell('settings put secure accessibility_enabled 1');
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .toContain('localabstract:glass-a11y');
    const client = await lineClient(await forward('glass-a11y'));
    expect(await client.next()).toBe('{"hello":{"proto":1}}');
    return client;
  }

  it('set_text replaces an editable node’s text, seen by the next tree; refused on a non-editable node', async () => {
    const client = await boundClient();
    client.send('{"id":1,"op":"tree","package":"com.example.notes"}');
    const first = JSON.parse(await client.next()) as { tree: A11yTreeNode; package: string };
    expect(first.package).toBe('com.example.notes'); // the active window: the "New folder" dialog
    const edit = flattenA11yTree(first.tree).find((n) => n.editable)!;
    expect(edit).toMatchObject({ class: 'android.widget.EditText', text: 'Trips & "ideas"' });
    const text = 'Résumé 📄 日本語 مرحبا a\u0301';
    client.send(JSON.stringify({ id: 2, op: 'action', ref: edit.ref, action: 'set_text', text }));
    expect(await client.next()).toBe('{"id":2,"ok":true}');
    client.send('{"id":3,"op":"tree","package":"com.example.notes"}');
    const second = JSON.parse(await client.next()) as { tree: A11yTreeNode };
    expect(flattenA11yTree(second.tree).find((n) => n.ref === edit.ref)?.text).toBe(text);
    // The uiautomator XML behind the snapshot helper shows it too (one device model).
    const android = device.android as SimAndroidHandle;
    expect(android.device.screen.text(android.device.screen.inputTarget()!)).toBe(text);
    client.send(JSON.stringify({ id: 4, op: 'action', ref: 0, action: 'set_text', text: 'x' }));
    expect(await client.next()).toBe('{"id":4,"ok":false,"error":"set_text was refused by ref 0"}');
    client.send(
      JSON.stringify({ id: 5, op: 'action', ref: edit.ref, action: 'set_text', text: 'Trips & "ideas"' }),
    );
    expect(await client.next()).toBe('{"id":5,"ok":true}');
    client.socket.destroy();
    await shell('settings delete secure enabled_accessibility_services');
    await shell('settings put secure accessibility_enabled 0');
  });

  it('glass-a11y-unbind: the socket goes away until the fault is lifted or the settings change again', async () => {
    const client = await boundClient();
    const dropped = new Promise<void>((resolve) => client.socket.once('close', () => resolve()));
    await controlFault('PATCH', 'glass-a11y-unbind');
    expect(device.android.listening()).not.toContain('localabstract:glass-a11y');
    await dropped;
    const android = device.android as SimAndroidHandle;
    expect(android.glassA11y.bindable()).toBe(false); // stays unbound while the fault holds
    await controlFault('DELETE', 'glass-a11y-unbind');
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .toContain('localabstract:glass-a11y');

    // A settings change rebinds it and clears the fault.
    device.setFault({ glassA11yUnbind: true });
    expect(device.android.listening()).not.toContain('localabstract:glass-a11y');
    await shell('settings put secure accessibility_enabled 1');
    expect(device.faults.glassA11yUnbind).toBeUndefined();
    await expect
      .poll(() => device.android.listening(), { timeout: 10_000 })
      .toContain('localabstract:glass-a11y');
    await shell('settings delete secure enabled_accessibility_services');
    await shell('settings put secure accessibility_enabled 0');
  });

  it("settings put of an empty value fails like a device's, delete works, a missing key reads null", async () => {
    await shell('settings put secure glass_test_key before');
    const put = await server.adb(['-s', device.serial, 'shell', "settings put secure glass_test_key ''"]);
    expect(put.code).toBe(255);
    expect(put.stderr.toString()).toBe('Bad arguments\n');
    expect((await shell('settings get secure glass_test_key')).out).toBe('before\n');
    expect((await shell('settings delete secure glass_test_key')).out).toBe('Deleted 1 rows\n');
    expect((await shell('settings get secure glass_test_key')).out).toBe('null\n');
  });
});
