import { readdirSync, readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { buildPinch, buildSwipe, encodeTouchPlanBase64 } from '../../src/protocol/helper/touch-plan.ts';
import { duplexPair } from '../../src/simulator/android/device.ts';
import {
  amInstrument,
  builtinScreenXml,
  forceStop,
  generateUiXml,
  runningHelperCount,
} from '../../src/simulator/helper/index.ts';
import { splitCommand } from '../../src/simulator/helper/session-server.ts';
import { mulberry32 } from '../../src/simulator/prng.ts';
import type {
  DeviceListener,
  Faults,
  InstalledPackage,
  ShellIO,
  SimDevice,
} from '../../src/simulator/types.ts';

const PKG = 'com.callstack.agentdevice.snapshothelper';
const RUNNER = `${PKG}/.SnapshotInstrumentation`;
const FULL = `${PKG}/${PKG}.SnapshotInstrumentation`;

// ---------------------------------------------------------------------------------------------
// A fake of our own SimDevice interface; `listen`/`connect` pair in-process streams (no sockets).

interface FakeDevice extends SimDevice {
  inputs: Array<Record<string, unknown>>;
  connect(port: number): Promise<Duplex>;
  listening(port: number): boolean;
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function fakeDevice(
  options: { xml?: string; faults?: Faults; seed?: number; installed?: boolean } = {},
): FakeDevice {
  const xml = options.xml ?? builtinScreenXml();
  const pkg: InstalledPackage = {
    packageName: PKG,
    versionCode: 2,
    versionName: '0.2.0',
    apkPath: `/data/app/${PKG}-1/base.apk`,
    sha256: 'a'.repeat(64),
    testOnly: true,
    signerSha256: null,
    instrumentations: [{ name: `${PKG}.SnapshotInstrumentation`, targetPackage: PKG }],
  };
  const servers = new Map<number, (socket: Duplex) => void>();
  const inputs: Array<Record<string, unknown>> = [];
  const random = mulberry32(options.seed ?? 42);
  const device: FakeDevice = {
    serial: 'emulator-5554',
    clipboard: null,
    inputs,
    getprop: (key) => (key === 'ro.build.version.sdk' ? '34' : undefined),
    findPackage: (name) => (name === PKG && options.installed !== false ? pkg : undefined),
    findInstrumentation: (component) => {
      if (options.installed === false) return undefined;
      if (component !== RUNNER && component !== FULL) return undefined;
      return { pkg, instrumentation: pkg.instrumentations[0]! };
    },
    listen(address, onConnection: (socket: Duplex) => void): DeviceListener {
      if (!('tcp' in address)) throw new Error('only tcp in this fake');
      if (servers.has(address.tcp)) throw new Error('EADDRINUSE');
      servers.set(address.tcp, onConnection);
      return {
        close() {
          if (servers.get(address.tcp) === onConnection) servers.delete(address.tcp);
        },
      };
    },
    async connect(port) {
      const onConnection = servers.get(port);
      if (!onConnection) throw new Error(`connection refused: tcp:${port}`);
      const [host, device] = duplexPair();
      cleanups.push(() => {
        host.destroy();
        device.destroy();
      });
      queueMicrotask(() => onConnection(device));
      return host;
    },
    listening: (port) => servers.has(port),
    uiXml: () => xml,
    displaySize: () => ({ width: 1080, height: 2400 }),
    recordInput: (event) => {
      inputs.push(event);
    },
    faults: options.faults ?? {},
    random,
  };
  return device;
}

interface Ran {
  stdout: string;
  stderr: string;
  code: number;
}

function start(device: SimDevice, argv: string[], controller = new AbortController()) {
  let stdout = '';
  let stderr = '';
  const dec = new TextDecoder();
  const io: ShellIO = {
    stdout: (d) => {
      stdout += typeof d === 'string' ? d : dec.decode(d);
    },
    stderr: (d) => {
      stderr += typeof d === 'string' ? d : dec.decode(d);
    },
    signal: controller.signal,
  };
  const done = amInstrument(argv, io, device).then((code): Ran => ({ stdout, stderr, code }));
  return { done, controller, stdout: () => stdout };
}

const run = (device: SimDevice, argv: string[]): Promise<Ran> => start(device, argv).done;

// ---------------------------------------------------------------------------------------------
// An independent reader of `am instrument` output for the assertions (not the host parser).

interface Parsed {
  statuses: Array<{ fields: Record<string, string>; keys: string[]; code: number }>;
  result: Record<string, string>;
  resultKeys: string[];
  code: number | undefined;
}

function parseAm(text: string): Parsed {
  const statuses: Parsed['statuses'] = [];
  let current: Record<string, string> = {};
  let keys: string[] = [];
  const result: Record<string, string> = {};
  const resultKeys: string[] = [];
  let code: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('INSTRUMENTATION_STATUS: ')) {
      const kv = line.slice('INSTRUMENTATION_STATUS: '.length);
      const eq = kv.indexOf('=');
      current[kv.slice(0, eq)] = kv.slice(eq + 1);
      keys.push(kv.slice(0, eq));
    } else if (line.startsWith('INSTRUMENTATION_STATUS_CODE: ')) {
      statuses.push({ fields: current, keys, code: Number(line.slice(29)) });
      current = {};
      keys = [];
    } else if (line.startsWith('INSTRUMENTATION_RESULT: ')) {
      const kv = line.slice('INSTRUMENTATION_RESULT: '.length);
      const eq = kv.indexOf('=');
      result[kv.slice(0, eq)] = kv.slice(eq + 1);
      resultKeys.push(kv.slice(0, eq));
    } else if (line.startsWith('INSTRUMENTATION_CODE: ')) {
      code = Number(line.slice(22));
    } else if (line !== '') {
      throw new Error(`unexpected line: ${line}`);
    }
  }
  return { statuses, result, resultKeys, code };
}

function chunkBytes(parsed: Parsed): Buffer {
  const chunks = parsed.statuses
    .filter((s) => s.fields['payloadBase64'] !== undefined)
    .sort((a, b) => Number(a.fields['chunkIndex']) - Number(b.fields['chunkIndex']));
  return Buffer.concat(chunks.map((c) => Buffer.from(c.fields['payloadBase64']!, 'base64')));
}

const xmlParser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' });

function countNodeElements(xml: string): number {
  return xml.match(/<node[\s/>]/g)?.length ?? 0;
}

function maxNodeDepth(xml: string): number {
  const parsed = xmlParser.parse(xml) as { hierarchy: { node?: unknown } };
  const depth = (node: unknown, d: number): number => {
    const list = Array.isArray(node) ? node : node === undefined || node === '' ? [] : [node];
    let max = -1;
    for (const n of list as Array<{ node?: unknown }>) max = Math.max(max, d, depth(n.node, d + 1));
    return max;
  };
  return depth(parsed.hierarchy.node, 0);
}

async function request(
  device: FakeDevice,
  port: number,
  line: string,
): Promise<{ headers: Record<string, string>; keys: string[]; body: Buffer }> {
  const socket = await device.connect(port);
  socket.end(line);
  const parts: Buffer[] = [];
  for await (const chunk of socket) parts.push(chunk as Buffer);
  const all = Buffer.concat(parts);
  const sep = all.indexOf('\n\n');
  const headers: Record<string, string> = {};
  const keys: string[] = [];
  for (const l of all.subarray(0, sep).toString('utf8').split('\n')) {
    const eq = l.indexOf('=');
    headers[l.slice(0, eq)] = l.slice(eq + 1);
    keys.push(l.slice(0, eq));
  }
  return { headers, keys, body: all.subarray(sep + 2) };
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

// ---------------------------------------------------------------------------------------------

describe('am instrument framing', () => {
  it('prints what real am prints when the runner is not installed', async () => {
    const out = await run(fakeDevice({ installed: false }), ['-w', '-r', RUNNER]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe(
      'INSTRUMENTATION_STATUS: id=ActivityManagerService\n' +
        `INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{${FULL}}\n` +
        'INSTRUMENTATION_STATUS_CODE: -1\n',
    );
    expect(out.stderr.split('\n')[0]).toBe(`android.util.AndroidException: INSTRUMENTATION_FAILED: ${FULL}`);
  });

  it('rejects unknown options and a missing component like am', async () => {
    const unknown = await run(fakeDevice(), ['-w', '--bogus', RUNNER]);
    expect(unknown).toMatchObject({ code: 255, stdout: '', stderr: 'Error: Unknown option: --bogus\n' });
    const missing = await run(fakeDevice(), ['-w', '-e', 'maxNodes']);
    expect(missing.code).toBe(255);
    expect(missing.stderr).toContain('IllegalArgumentException: Argument expected after "maxNodes"');
    const bad = await run(fakeDevice(), ['-w', 'no-slash']);
    expect(bad.stderr).toContain('Bad component name: no-slash');
  });
});

describe('snapshot mode (one-shot)', () => {
  it('streams 2 KiB UTF-8 chunks that reassemble to exactly the device XML', async () => {
    const xml = generateUiXml(400, 3);
    const device = fakeDevice({ xml });
    const out = await run(device, [
      '-w',
      '--user',
      '0',
      '--no-window-animation',
      '-e',
      'waitForIdleTimeoutMs',
      '0',
      RUNNER,
    ]);
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    const parsed = parseAm(out.stdout);
    const total = Buffer.byteLength(xml);
    const expectedChunks = Math.ceil(total / 2048);
    expect(parsed.statuses).toHaveLength(expectedChunks);
    for (const [i, s] of parsed.statuses.entries()) {
      expect(s.code).toBe(1);
      expect(s.fields).toMatchObject({
        agentDeviceProtocol: 'android-snapshot-helper-v1',
        helperApiVersion: '2',
        outputFormat: 'uiautomator-xml',
        chunkIndex: String(i),
        chunkCount: String(expectedChunks),
      });
      const size = Buffer.from(s.fields['payloadBase64']!, 'base64').length;
      expect(size).toBe(i < expectedChunks - 1 ? 2048 : total - 2048 * (expectedChunks - 1));
    }
    expect(chunkBytes(parsed).toString('utf8')).toBe(xml);
    expect(parsed.code).toBe(0);
    expect(parsed.result).toMatchObject({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      helperApiVersion: '2',
      outputFormat: 'uiautomator-xml',
      ok: 'true',
      waitForIdleTimeoutMs: '0',
      waitForIdleQuietMs: '100',
      timeoutMs: '8000',
      maxDepth: '128',
      maxNodes: '5000',
      rootPresent: 'true',
      captureMode: 'interactive-windows',
      windowCount: '2',
      nodeCount: '400',
      truncated: 'false',
    });
    expect(Number(parsed.result['elapsedMs'])).toBeGreaterThanOrEqual(0);
  });

  it('splits bytes, not characters: a multi-byte character straddles a chunk boundary', async () => {
    const xml =
      "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">" +
      `<node index="0" text="${'京'.repeat(1500)}🎉" class="android.widget.TextView" bounds="[0,0][10,10]" /></hierarchy>`;
    const parsed = parseAm((await run(fakeDevice({ xml }), ['-w', RUNNER])).stdout);
    expect(parsed.statuses).toHaveLength(3);
    const fatal = new TextDecoder('utf-8', { fatal: true });
    const first = Buffer.from(parsed.statuses[0]!.fields['payloadBase64']!, 'base64');
    expect(first.length).toBe(2048);
    expect(() => fatal.decode(first)).toThrow();
    expect(chunkBytes(parsed).toString('utf8')).toBe(xml);
    expect(parsed.result).toMatchObject({ nodeCount: '1', windowCount: '1' });
  });

  it('captures the built-in screen: four windows, parses, honours the defaults', async () => {
    const out = await run(fakeDevice(), ['-w', RUNNER]);
    const parsed = parseAm(out.stdout);
    const xml = chunkBytes(parsed).toString('utf8');
    expect(xml).toBe(builtinScreenXml());
    expect(parsed.result).toMatchObject({
      ok: 'true',
      windowCount: '4',
      nodeCount: String(countNodeElements(xml)),
    });
  });

  it('truncates at maxNodes in document order and reports truncated=true', async () => {
    const out = await run(fakeDevice({ xml: generateUiXml(300, 1) }), ['-w', '-e', 'maxNodes', '25', RUNNER]);
    const parsed = parseAm(out.stdout);
    const xml = chunkBytes(parsed).toString('utf8');
    expect(parsed.result).toMatchObject({
      ok: 'true',
      maxNodes: '25',
      nodeCount: '25',
      truncated: 'true',
      windowCount: '1',
    });
    expect(countNodeElements(xml)).toBe(25);
    expect(xml.startsWith(generateUiXml(300, 1).slice(0, 2000))).toBe(true);
    expect(() => xmlParser.parse(xml, true)).not.toThrow();
    expect(xml.endsWith('</hierarchy>')).toBe(true);
  });

  it('truncates at maxDepth: no node deeper than maxDepth', async () => {
    const full = builtinScreenXml();
    expect(maxNodeDepth(full)).toBeGreaterThan(3);
    const out = await run(fakeDevice(), ['-w', '-e', 'maxDepth', '3', RUNNER]);
    const parsed = parseAm(out.stdout);
    const xml = chunkBytes(parsed).toString('utf8');
    expect(maxNodeDepth(xml)).toBe(3);
    expect(parsed.result).toMatchObject({ truncated: 'true', maxDepth: '3', windowCount: '4' });
    expect(Number(parsed.result['nodeCount'])).toBe(countNodeElements(xml));
    // maxDepth 0 keeps only the window roots.
    const roots = parseAm((await run(fakeDevice(), ['-w', '-e', 'maxDepth', '0', RUNNER])).stdout);
    expect(roots.result).toMatchObject({ nodeCount: '4', windowCount: '4', truncated: 'true' });
  });

  it('reports bad extras as ok=false with errorType and message', async () => {
    const out = await run(fakeDevice(), ['-w', '-e', 'maxNodes', '12x', RUNNER]);
    const parsed = parseAm(out.stdout);
    expect(parsed.statuses).toHaveLength(0);
    expect(parsed.result).toMatchObject({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      ok: 'false',
      errorType: 'java.lang.NumberFormatException',
      message: 'For input string: "12x"',
    });
    expect(parsed.code).toBe(1);
    const overflow = parseAm(
      (await run(fakeDevice(), ['-w', '-e', 'maxDepth', '2147483648', RUNNER])).stdout,
    );
    expect(overflow.result['ok']).toBe('false');
    const mode = parseAm((await run(fakeDevice(), ['-w', '-e', 'mode', 'dance', RUNNER])).stdout);
    expect(mode.result).toMatchObject({ ok: 'false', message: 'Unsupported mode: dance' });
  });

  it('prints bundle keys in String order, as am (Instrument.java sorted(keySet())) does', async () => {
    const a = await run(fakeDevice({ seed: 7 }), ['-w', RUNNER]);
    const c = await run(fakeDevice({ seed: 8 }), ['-w', RUNNER]);
    const timeless = (text: string): string => text.replace(/elapsedMs=\d+/, 'elapsedMs=N');
    expect(timeless(a.stdout)).toBe(timeless(c.stdout));
    const parsed = parseAm(a.stdout);
    const sorted = (keys: string[]): string[] => [...keys].sort();
    expect(parsed.statuses.length).toBeGreaterThan(1);
    for (const s of parsed.statuses) {
      expect(s.keys).toEqual(sorted(s.keys));
      expect(s.keys[0]).toBe('agentDeviceProtocol');
    }
    expect(parsed.resultKeys).toEqual(sorted(parsed.resultKeys));
    expect(parsed.resultKeys.length).toBeGreaterThan(10);
  });
});

describe('viewport and gesture modes', () => {
  it('viewport: the active application window (the dialog on the built-in screen)', async () => {
    const parsed = parseAm((await run(fakeDevice(), ['-w', '-e', 'mode', 'viewport', RUNNER])).stdout);
    expect(parsed.statuses).toHaveLength(0);
    expect(parsed.result).toMatchObject({
      ok: 'true',
      kind: 'viewport',
      x: '68',
      y: '760',
      width: '944',
      height: '596',
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      helperApiVersion: '2',
      outputFormat: 'uiautomator-xml',
    });
    expect(parsed.result['nodeCount']).toBeUndefined();
  });

  it('viewport: without window metadata, the first root that is not system UI or a keyboard', async () => {
    const xml =
      "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">" +
      '<node index="0" package="com.android.systemui" bounds="[0,0][1080,72]" />' +
      '<node index="1" package="com.google.android.inputmethod.latin" bounds="[0,1200][1080,1920]" />' +
      '<node index="2" package="com.avito.android" bounds="[0,72][1080,1920]"><node index="0" bounds="[0,0][1,1]" /></node>' +
      '</hierarchy>';
    const parsed = parseAm((await run(fakeDevice({ xml }), ['-w', '-e', 'mode', 'viewport', RUNNER])).stdout);
    expect(parsed.result).toMatchObject({ x: '0', y: '72', width: '1080', height: '1848' });
  });

  it('gesture: validates, injects and records the plan', async () => {
    const device = fakeDevice();
    const plan = buildPinch({ x: 540, y: 1200 }, 400, 100, 160, 0, 4);
    const out = await run(device, [
      '-w',
      '-e',
      'mode',
      'gesture',
      '-e',
      'payloadBase64',
      encodeTouchPlanBase64(plan),
      RUNNER,
    ]);
    const parsed = parseAm(out.stdout);
    expect(parsed.result).toMatchObject({ ok: 'true', kind: 'transform', injectedEvents: String(5 + 3) });
    expect(Number(parsed.result['elapsedMs'])).toBeGreaterThanOrEqual(160);
    expect(parsed.code).toBe(0);
    expect(device.inputs).toEqual([plan]);
  });

  it('gesture: an invalid plan is ok=false IllegalArgumentException naming pointer and sample', async () => {
    const device = fakeDevice();
    const plan = buildSwipe({ x: 0, y: 0 }, { x: 10, y: 10 }, 100, 4);
    plan.pointers[0]!.samples[2]!.offsetMs = 10;
    const b64 = Buffer.from(JSON.stringify(plan)).toString('base64');
    const parsed = parseAm(
      (await run(device, ['-w', '-e', 'mode', 'gesture', '-e', 'payloadBase64', b64, RUNNER])).stdout,
    );
    expect(parsed.result).toMatchObject({ ok: 'false', errorType: 'java.lang.IllegalArgumentException' });
    expect(parsed.result['message']).toContain(
      'pointers.0.samples.2.offsetMs: offsetMs values must be strictly increasing',
    );
    expect(parsed.code).toBe(1);
    expect(device.inputs).toEqual([]);
    const missing = parseAm((await run(device, ['-w', '-e', 'mode', 'gesture', RUNNER])).stdout);
    expect(missing.result).toMatchObject({ ok: 'false', message: 'Missing payloadBase64' });
  });
});

describe('faults', () => {
  const xml = generateUiXml(120, 5);
  const chunksOf = (out: Ran): number[] =>
    parseAm(out.stdout).statuses.map((s) => Number(s.fields['chunkIndex']));

  it('drops, duplicates or corrupts the chunk at the given index', async () => {
    const dropped = await run(fakeDevice({ xml, faults: { chunk: { action: 'drop', index: 2 } } }), [
      '-w',
      RUNNER,
    ]);
    expect(chunksOf(dropped)).not.toContain(2);
    expect(chunksOf(dropped)).toContain(3);
    const dup = await run(fakeDevice({ xml, faults: { chunk: { action: 'duplicate', index: 1 } } }), [
      '-w',
      RUNNER,
    ]);
    expect(chunksOf(dup).filter((i) => i === 1)).toHaveLength(2);
    const corrupt = await run(fakeDevice({ xml, faults: { chunk: { action: 'corrupt', index: 0 } } }), [
      '-w',
      RUNNER,
    ]);
    const parsed = parseAm(corrupt.stdout);
    expect(parsed.statuses[0]!.fields['payloadBase64']).toMatch(/[^A-Za-z0-9+/=]/);
    expect(parsed.statuses[1]!.fields['payloadBase64']).toMatch(/^[A-Za-z0-9+/=]+$/);
    expect(chunkBytes(parsed).toString('utf8')).not.toBe(xml);
    expect(parsed.result['ok']).toBe('true');
  });

  it('helperCrash: part of the chunks, then am reports Process crashed. with code 0', async () => {
    const out = await run(fakeDevice({ xml, faults: { helperCrash: true } }), ['-w', RUNNER]);
    const parsed = parseAm(out.stdout);
    const count = Number(parsed.statuses[0]?.fields['chunkCount']);
    expect(parsed.statuses.length).toBeLessThan(count);
    expect(
      out.stdout.endsWith('INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n'),
    ).toBe(true);
    expect(parsed.result).toEqual({ shortMsg: 'Process crashed.' });
    expect(out.code).toBe(0);
  });

  it('helperTimeout: hangs until the caller aborts', async () => {
    const device = fakeDevice({ faults: { helperTimeout: true } });
    const started = start(device, ['-w', RUNNER]);
    let settled = false;
    void started.done.then(() => {
      settled = true;
    });
    // The same run started later on a device without the fault answers: this one would have too.
    expect((await run(fakeDevice(), ['-w', RUNNER])).code).toBe(0);
    expect(settled).toBe(false);
    expect(runningHelperCount(device, PKG)).toBe(1);
    started.controller.abort();
    const out = await started.done;
    expect(out.stdout).toBe('');
    expect(runningHelperCount(device, PKG)).toBe(0);
  });

  it('helperTimeout: am force-stop ends it with Process crashed.', async () => {
    const device = fakeDevice({ faults: { helperTimeout: true } });
    const started = start(device, ['-w', RUNNER]);
    await waitFor(() => runningHelperCount(device, PKG) === 1);
    forceStop(device, PKG);
    const out = await started.done;
    expect(out.stdout).toBe('INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n');
  });
});

describe('persistent session', () => {
  const PORT = 37123;

  async function startSession(device: FakeDevice, extra: string[] = []) {
    const started = start(device, ['-w', '-e', 'sessionPort', String(PORT), ...extra, RUNNER]);
    await waitFor(() => started.stdout().includes('INSTRUMENTATION_STATUS_CODE: 2'));
    return started;
  }

  it('announces sessionReady, serves snapshot/viewport/gesture, and ends on quit', async () => {
    const device = fakeDevice({ xml: generateUiXml(200, 9) });
    const session = await startSession(device, ['-e', 'maxNodes', '150']);
    const ready = parseAm(session.stdout()).statuses[0]!;
    expect(ready.fields).toMatchObject({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      sessionReady: 'true',
      sessionPort: String(PORT),
      maxNodes: '150',
    });

    const snap = await request(device, PORT, 'snapshot req-1\n');
    expect(snap.headers).toMatchObject({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      outputFormat: 'uiautomator-xml',
      requestId: 'req-1',
      ok: 'true',
      nodeCount: '150',
      truncated: 'true',
      byteLength: String(snap.body.length),
    });
    expect(countNodeElements(snap.body.toString('utf8'))).toBe(150);

    const vp = await request(device, PORT, 'viewport req-2\n');
    expect(vp.headers).toMatchObject({ requestId: 'req-2', ok: 'true', kind: 'viewport', width: '1080' });
    expect(vp.body.length).toBe(0);

    const plan = buildSwipe({ x: 500, y: 1800 }, { x: 500, y: 600 }, 48, 3);
    const g = await request(device, PORT, `gesture req-3 ${encodeTouchPlanBase64(plan)}\n`);
    expect(g.headers).toMatchObject({ requestId: 'req-3', ok: 'true', kind: 'swipe', injectedEvents: '4' });
    expect(device.inputs).toEqual([plan]);

    const bad = await request(device, PORT, 'gesture req-4 bm9wZQ==\n');
    expect(bad.headers).toMatchObject({
      requestId: 'req-4',
      ok: 'false',
      errorType: 'java.lang.IllegalArgumentException',
    });

    const unknown = await request(device, PORT, 'dance req-5\n');
    expect(unknown.headers).toMatchObject({
      requestId: 'req-5',
      ok: 'false',
      message: 'unknown session command',
    });

    // Still running: am has not finished.
    expect(parseAm(session.stdout()).code).toBeUndefined();
    const quit = await request(device, PORT, 'quit req-6\n');
    expect(quit.headers).toMatchObject({ requestId: 'req-6', ok: 'true' });
    const out = await session.done;
    const parsed = parseAm(out.stdout);
    expect(parsed.result).toMatchObject({ ok: 'true', sessionEnded: 'true' });
    expect(parsed.code).toBe(0);
    expect(device.listening(PORT)).toBe(false);
  });

  it('headers come in String order (as our helper writes them) and byteLength counts UTF-8 bytes', async () => {
    const device = fakeDevice();
    const session = await startSession(device);
    const a = await request(device, PORT, 'snapshot a\n');
    const b = await request(device, PORT, 'snapshot b\n');
    expect(a.keys).toEqual([...a.keys].sort());
    expect(b.keys).toEqual(a.keys);
    expect(a.keys.length).toBeGreaterThan(10);
    expect(a.body.toString('utf8')).toBe(builtinScreenXml());
    expect(Number(a.headers['byteLength'])).toBe(Buffer.byteLength(builtinScreenXml()));
    expect(Number(a.headers['byteLength'])).toBeGreaterThan(builtinScreenXml().length);
    session.controller.abort();
    await session.done;
    expect(device.listening(PORT)).toBe(false);
  });

  it('am force-stop ends the session with Process crashed.', async () => {
    const device = fakeDevice();
    const session = await startSession(device);
    forceStop(device, PKG);
    const out = await session.done;
    expect(
      out.stdout.endsWith('INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n'),
    ).toBe(true);
    expect(device.listening(PORT)).toBe(false);
  });

  it('a port already in use gives ok=false BindException', async () => {
    const device = fakeDevice();
    device.listen({ tcp: PORT }, () => {});
    const parsed = parseAm((await run(device, ['-w', '-e', 'sessionPort', String(PORT), RUNNER])).stdout);
    expect(parsed.result).toMatchObject({ ok: 'false', errorType: 'java.net.BindException' });
    expect(parsed.code).toBe(1);
  });

  it('without -w am returns at once and the session keeps serving until force-stop', async () => {
    const device = fakeDevice();
    const out = await run(device, ['-e', 'sessionPort', String(PORT), RUNNER]);
    expect(out).toEqual({ stdout: '', stderr: '', code: 0 });
    await waitFor(() => device.listening(PORT));
    const snap = await request(device, PORT, 'snapshot x\n');
    expect(snap.headers['ok']).toBe('true');
    forceStop(device, PKG);
    await waitFor(() => !device.listening(PORT) && runningHelperCount(device) === 0);
    await expect(device.connect(PORT)).rejects.toThrow('connection refused');
  });

  it('a new am instrument of the same package kills the running session', async () => {
    const device = fakeDevice();
    const session = await startSession(device);
    const oneShot = await run(device, ['-w', RUNNER]);
    expect(parseAm(oneShot.stdout).result['ok']).toBe('true');
    const out = await session.done;
    expect(parseAm(out.stdout).result).toEqual({ shortMsg: 'Process crashed.' });
  });
});

describe('capture of real uiautomator dumps (test/fixtures/uiautomator)', () => {
  const dir = new URL('../fixtures/uiautomator/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.xml'));

  it.each(files)(
    '%s: passes through untouched, and cuts to half its nodes as well-formed XML',
    async (name) => {
      const xml = readFileSync(new URL(name, dir), 'utf8');
      const total = countNodeElements(xml);
      const full = parseAm((await run(fakeDevice({ xml }), ['-w', RUNNER])).stdout);
      expect(chunkBytes(full).toString('utf8')).toBe(xml);
      expect(full.result).toMatchObject({ nodeCount: String(total), truncated: 'false' });
      const half = Math.floor(total / 2);
      const cut = parseAm(
        (await run(fakeDevice({ xml }), ['-w', '-e', 'maxNodes', String(half), RUNNER])).stdout,
      );
      const cutXml = chunkBytes(cut).toString('utf8');
      expect(countNodeElements(cutXml)).toBe(half);
      expect(cut.result).toMatchObject({ nodeCount: String(half), truncated: 'true' });
      expect(XMLValidator.validate(cutXml)).toBe(true);
    },
  );
});

describe('UI sources', () => {
  it('generateUiXml(5000) has exactly 5000 nodes, parses, and is deterministic per seed', () => {
    const xml = generateUiXml(5000, 11);
    expect(countNodeElements(xml)).toBe(5000);
    const bytes = Buffer.byteLength(xml);
    expect(bytes).toBeGreaterThan(1_200_000);
    expect(bytes).toBeLessThan(2_500_000);
    const parsed = xmlParser.parse(xml, true) as { hierarchy: { node: unknown[] } };
    expect(parsed.hierarchy.node).toHaveLength(2);
    expect(maxNodeDepth(xml)).toBeGreaterThan(12);
    expect(generateUiXml(5000, 11)).toBe(xml);
    expect(generateUiXml(5000, 12)).not.toBe(xml);
    for (const n of [0, 1, 7, 59, 60, 61, 1234]) expect(countNodeElements(generateUiXml(n, 2))).toBe(n);
  });

  it('builtinScreenXml is real uiautomator XML with four windows and overlapping siblings', () => {
    const xml = builtinScreenXml();
    expect(
      xml.startsWith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"),
    ).toBe(true);
    const doc = xmlParser.parse(xml, true) as { hierarchy: { node: Array<Record<string, string>> } };
    const roots = doc.hierarchy.node;
    expect(roots.map((r) => r['package'])).toEqual([
      'com.example.notes',
      'com.example.notes',
      'com.android.systemui',
      'com.google.android.inputmethod.latin',
    ]);
    expect(roots.map((r) => r['window-type'])).toEqual(['1', '1', '3', '2']);
    for (const attr of [
      'index',
      'text',
      'resource-id',
      'class',
      'package',
      'content-desc',
      'checkable',
      'checked',
      'clickable',
      'enabled',
      'focusable',
      'focused',
      'scrollable',
      'long-clickable',
      'password',
      'selected',
      'visible-to-user',
      'bounds',
      'drawing-order',
    ]) {
      expect(xml.split(` ${attr}="`).length - 1, attr).toBe(countNodeElements(xml));
    }
    expect(xml).toContain('scrollable="true"');
    expect(xml).toContain('focused="true"');
    expect(xml).toContain('&quot;ideas&quot;');
    expect(xml).toContain('京都駅');
    expect(xml).toMatch(/resource-id="com\.example\.notes:id\/fab_new_note"[^>]*drawing-order="3"/);
  });
});

describe('session command lines: split as the helper splits them', () => {
  const { cases } = JSON.parse(
    readFileSync(
      new URL('../fixtures/contract/snapshot-helper/session-commands.json', import.meta.url),
      'utf8',
    ),
  ) as { cases: Array<{ line: string; parts: [string, string, string] }> };

  it.each(cases.map((c) => [c.line, c] as const))('%j', (_, c) => {
    const [action = '', requestId = '', payload = ''] = splitCommand(c.line);
    expect([action, requestId, payload]).toEqual(c.parts);
  });
});
