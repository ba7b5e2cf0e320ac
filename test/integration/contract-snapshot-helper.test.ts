/**
 * One contract, three implementations: the snapshot helper's pure-Java core (android/), the
 * bridge's parsers (src/protocol/helper/) and the simulator's emulated helper
 * (src/simulator/helper/) agree on every byte of test/fixtures/contract/snapshot-helper/.
 *
 * - The committed streams are what release/generate-contract.sh writes today (stale → fail).
 * - The bridge's parsers accept every stream with the expected results.
 * - The simulator, given the same tree and request, emits identical bytes.
 */
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleSnapshotChunks, interpretSnapshotResult } from '../../src/protocol/helper/chunks.ts';
import { parseInstrumentationOutput } from '../../src/protocol/helper/instrumentation-output.ts';
import { parseSessionResponse, type SessionCommand } from '../../src/protocol/helper/session-frames.ts';
import { decodeTouchPlanBase64 } from '../../src/protocol/helper/touch-plan.ts';
import { amInstrument } from '../../src/simulator/helper/index.ts';
import { mulberry32 } from '../../src/simulator/prng.ts';
import type { DeviceListener, InstalledPackage, ShellIO, SimDevice } from '../../src/simulator/types.ts';
import { ROOT, run } from '../support/android.ts';

const DIR = path.join(ROOT, 'test/fixtures/contract/snapshot-helper');
const STREAMS = path.join(DIR, 'streams');
const PKG = 'dev.devicebridge.snapshothelper';
const RUNNER = `${PKG}/.SnapshotInstrumentation`;

interface ContractCase {
  name: string;
  tree: string;
  extras: Record<string, string>;
  session?: Array<string | null>;
}

const requests = JSON.parse(await readFile(path.join(DIR, 'requests.json'), 'utf8')) as {
  cases: ContractCase[];
};
const cases = requests.cases;
const stream = (file: string): Promise<Buffer> => readFile(path.join(STREAMS, file));
const tree = (c: ContractCase): Promise<string> => readFile(path.join(DIR, c.tree), 'utf8');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'contract-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('committed contract streams', () => {
  it('are exactly what the Java cores generate now (snapshot helper and glass)', async () => {
    const out = path.join(scratch, 'generated');
    const result = await run('bash', ['release/generate-contract.sh', out], { timeoutMs: 120_000 });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const pairs: Array<[string, string]> = [
      [path.join(out, 'snapshot-helper'), STREAMS],
      [path.join(out, 'glass'), path.join(ROOT, 'test/fixtures/contract/glass/streams')],
    ];
    for (const [fresh, committedDir] of pairs) {
      const generated = (await readdir(fresh)).sort();
      expect(generated.length).toBeGreaterThan(0);
      expect((await readdir(committedDir)).sort()).toEqual(generated);
      for (const file of generated) {
        const bytes = await readFile(path.join(fresh, file));
        const committed = await readFile(path.join(committedDir, file));
        expect(bytes.equals(committed), `${file} is stale: run release/generate-contract.sh`).toBe(true);
      }
    }
  }, 120_000);
});

describe("the bridge's parsers accept every stream", () => {
  it('one-shot snapshots: chunks reassemble to the tree (cut to the limits) with the result fields', async () => {
    const full = cases.find((c) => c.name === 'snapshot') as ContractCase;
    const output = parseInstrumentationOutput((await stream('snapshot.am.txt')).toString('utf8'));
    const verdict = interpretSnapshotResult(output);
    expect(verdict.ok).toBe(true);
    if (!verdict.ok || verdict.mode !== 'snapshot') throw new Error('not a snapshot');
    expect(verdict.xml).toBe(await tree(full));
    expect(verdict.result).toMatchObject({
      helperApiVersion: 2,
      captureMode: 'interactive-windows',
      rootPresent: true,
      windowCount: 2,
      truncated: false,
      waitForIdleTimeoutMs: 500,
      maxNodes: 5000,
    });
    expect(output.statuses.length).toBeGreaterThan(1);

    const cut = interpretSnapshotResult(
      parseInstrumentationOutput((await stream('snapshot-max-nodes.am.txt')).toString('utf8')),
    );
    if (!cut.ok || cut.mode !== 'snapshot') throw new Error('not a snapshot');
    expect(cut.result).toMatchObject({ nodeCount: 9, truncated: true, maxNodes: 9 });
    expect(cut.xml.match(/<node /g)).toHaveLength(9);

    const shallow = interpretSnapshotResult(
      parseInstrumentationOutput((await stream('snapshot-max-depth.am.txt')).toString('utf8')),
    );
    if (!shallow.ok || shallow.mode !== 'snapshot') throw new Error('not a snapshot');
    expect(shallow.result).toMatchObject({ truncated: true, maxDepth: 2, windowCount: 2 });

    const api23 = interpretSnapshotResult(
      parseInstrumentationOutput((await stream('snapshot-api23.am.txt')).toString('utf8')),
    );
    if (!api23.ok || api23.mode !== 'snapshot') throw new Error('not a snapshot');
    expect(api23.xml).not.toContain('drawing-order');
    expect(api23.xml).toContain('<hierarchy rotation="1">');
  });

  it('a snapshot without chunks has its result but no XML to assemble', async () => {
    const output = parseInstrumentationOutput((await stream('snapshot-no-chunks.am.txt')).toString('utf8'));
    expect(output.statuses).toHaveLength(0);
    expect(output.result['ok']).toBe('true');
    expect(assembleSnapshotChunks(output.statuses).ok).toBe(false);
  });

  it('viewport and gesture results', async () => {
    const viewport = interpretSnapshotResult(
      parseInstrumentationOutput((await stream('viewport.am.txt')).toString('utf8')),
      { mode: 'viewport' },
    );
    expect(viewport).toMatchObject({
      ok: true,
      mode: 'viewport',
      result: { x: 0, y: 0, width: 1080, height: 2400 },
    });
    const landscape = interpretSnapshotResult(
      parseInstrumentationOutput((await stream('viewport-api23.am.txt')).toString('utf8')),
      { mode: 'viewport' },
    );
    expect(landscape).toMatchObject({ ok: true, result: { width: 2400, height: 1080 } });
    const swipe = interpretSnapshotResult(
      parseInstrumentationOutput((await stream('gesture-swipe.am.txt')).toString('utf8')),
      { mode: 'gesture' },
    );
    expect(swipe).toMatchObject({
      ok: true,
      mode: 'gesture',
      result: { kind: 'swipe', injectedEvents: 4, elapsedMs: 240 },
    });
    const pinch = interpretSnapshotResult(
      parseInstrumentationOutput((await stream('gesture-pinch.am.txt')).toString('utf8')),
      { mode: 'gesture' },
    );
    expect(pinch).toMatchObject({
      ok: true,
      result: { kind: 'transform', injectedEvents: 6, elapsedMs: 100 },
    });
  });

  it('failures: HELPER_FAILED with the helper errorType and message; gesture messages are the bridge validator words', async () => {
    const bad = cases.find((c) => c.name === 'failure-gesture') as ContractCase;
    const decoded = decodeTouchPlanBase64(bad.extras['payloadBase64'] as string);
    if (decoded.valid) throw new Error('fixture plan should be invalid');
    const bridgeMessage = decoded.errors
      .map((e) => (e.path === '' ? e.message : `${e.path}: ${e.message}`))
      .join('; ');
    const expectations: Array<[string, string, string]> = [
      ['failure-gesture', 'java.lang.IllegalArgumentException', bridgeMessage],
      ['failure-mode', 'java.lang.IllegalArgumentException', 'Unsupported mode: record'],
      ['failure-option', 'java.lang.NumberFormatException', 'For input string: "deep"'],
    ];
    for (const [name, errorType, message] of expectations) {
      const output = parseInstrumentationOutput((await stream(`${name}.am.txt`)).toString('utf8'));
      expect(output.code).toBe(1);
      const verdict = interpretSnapshotResult(output);
      expect(verdict.ok).toBe(false);
      if (verdict.ok) continue;
      expect(verdict.error.code).toBe('HELPER_FAILED');
      expect(verdict.error.details).toMatchObject({ errorType, message });
    }
  });

  it('session: ready status, each response, and the end result', async () => {
    const session = cases.find((c) => c.name === 'session') as ContractCase;
    const output = parseInstrumentationOutput((await stream('session.am.txt')).toString('utf8'));
    expect(output.statuses[0]?.fields).toMatchObject({ sessionReady: 'true', sessionPort: '7913' });
    expect(output.statuses[0]?.code).toBe(2);
    expect(output.result).toMatchObject({ ok: 'true', sessionEnded: 'true' });
    const lines = session.session ?? [];
    const parsed = await Promise.all(
      lines.map(async (line, n) => {
        const [command = '', requestId = ''] = (line ?? '').split(' ');
        return {
          command,
          response: parseSessionResponse(await stream(`session.${n}.response`), {
            requestId,
            command: command as SessionCommand,
          }),
        };
      }),
    );
    const [snapshot, viewport, gesture, unknown, missing, quit] = parsed.map((p) => p.response);
    expect(snapshot).toMatchObject({
      ok: true,
      command: 'snapshot',
      result: { nodeCount: 20, truncated: true },
    });
    if (snapshot?.ok && snapshot.command === 'snapshot') {
      expect(Buffer.byteLength(snapshot.xml)).toBe(snapshot.byteLength);
    }
    expect(viewport).toMatchObject({ ok: true, result: { width: 1080, height: 2400 } });
    expect(gesture).toMatchObject({ ok: true, result: { kind: 'transform', injectedEvents: 6 } });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'HELPER_FAILED' } });
    expect(missing).toMatchObject({ ok: false, error: { details: { message: 'Missing payloadBase64' } } });
    expect(quit).toMatchObject({ ok: true, command: 'quit' });
  });
});

// ---------------------------------------------------------------------------------------------
// The simulator's emulated helper over the same trees and requests.

/** A SimDevice showing `xml`, with our helper installed, a frozen clock and real loopback listeners. */
function contractDevice(xml: string) {
  const pkg: InstalledPackage = {
    packageName: PKG,
    versionCode: 1_000_000,
    versionName: '1.0.0',
    apkPath: `/data/app/${PKG}-1/base.apk`,
    sha256: 'a'.repeat(64),
    testOnly: true,
    signerSha256: null,
    instrumentations: [{ name: `${PKG}.SnapshotInstrumentation`, targetPackage: PKG }],
  };
  const servers = new Map<number, Promise<number>>();
  const closers: Array<() => void> = [];
  const random = mulberry32(7);
  const device: SimDevice & { connect(port: number): Promise<net.Socket>; close(): void } = {
    serial: 'contract-1',
    clipboard: null,
    getprop: (key) => (key === 'ro.build.version.sdk' ? '34' : undefined),
    findPackage: (name) => (name === PKG ? pkg : undefined),
    findInstrumentation: (component) =>
      component === RUNNER ? { pkg, instrumentation: pkg.instrumentations[0]! } : undefined,
    listen(address, onConnection: (socket: Duplex) => void): DeviceListener {
      if (!('tcp' in address)) throw new Error('tcp only');
      const server = net.createServer({ allowHalfOpen: true }, (socket) => onConnection(socket));
      server.listen(0, '127.0.0.1');
      servers.set(
        address.tcp,
        once(server, 'listening').then(() => (server.address() as net.AddressInfo).port),
      );
      closers.push(() => server.close());
      return {
        close() {
          servers.delete(address.tcp);
          server.close();
        },
      };
    },
    async connect(port) {
      const ready = servers.get(port);
      if (!ready) throw new Error(`nothing listens on tcp:${port}`);
      const socket = net.connect(await ready, '127.0.0.1');
      await once(socket, 'connect');
      return socket;
    },
    close: () => {
      for (const c of closers) c();
    },
    uiXml: () => xml,
    displaySize: () => ({ width: 1080, height: 2400 }),
    recordInput: () => {},
    faults: {},
    random,
    now: () => 5000,
  };
  return device;
}

async function simulate(c: ContractCase): Promise<Map<string, Buffer>> {
  const device = contractDevice(await tree(c));
  const argv = ['-w'];
  for (const [key, value] of Object.entries(c.extras)) argv.push('-e', key, value);
  argv.push(RUNNER);
  let stdout = '';
  const io: ShellIO = {
    stdout: (d) => {
      stdout += typeof d === 'string' ? d : Buffer.from(d).toString('utf8');
    },
    stderr: () => {},
    signal: new AbortController().signal,
  };
  const files = new Map<string, Buffer>();
  const done = amInstrument(argv, io, device);
  try {
    if (c.session !== undefined) {
      const port = Number(c.extras['sessionPort']);
      while (!stdout.includes('sessionReady=true')) await new Promise((r) => setTimeout(r, 5));
      for (const [n, line] of c.session.entries()) {
        const socket = await device.connect(port);
        const parts: Buffer[] = [];
        socket.on('data', (d: Buffer) => parts.push(d));
        const ended = once(socket, 'close');
        socket.end(line === null ? '' : `${line}\n`);
        await ended;
        files.set(`${c.name}.${n}.response`, Buffer.concat(parts));
      }
    }
    await done;
  } finally {
    device.close();
  }
  files.set(`${c.name}.am.txt`, Buffer.from(stdout, 'utf8'));
  return files;
}

describe('the simulator emits identical bytes for the same tree and request', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const files = await simulate(c);
      for (const [file, bytes] of files) {
        const expected = (await stream(file)).toString('utf8');
        expect(bytes.toString('utf8'), file).toBe(expected);
      }
    });
  }
});
