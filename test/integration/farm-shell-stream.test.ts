/**
 * POST /v1/leases/{id}/shell/stream through a listening bridge (real HTTP), over a simulated device
 * reached through the real adb server: output events and the exit status through the typed client,
 * the deadline, the `shell` capability and tenancy, the device's command closed when the client
 * disconnects and when the lease ends, and the CLI's `shell --stream` passing the exit status through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeClientError, DeviceBridgeClient } from '../../src/client/index.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  OTHER_SHELL_TOKEN,
  SHELL_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { contractCall } from '../support/contract.ts';

async function until(what: string, check: () => boolean, timeoutMs = 3000): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

describe('lease shell, streamed', () => {
  let bridge: DeviceBridge;
  let served: { url: string; close(): Promise<void> };
  let client: DeviceBridgeClient;
  let leaseId: string;
  /** `logcat` readers on the device: a running `logcat` command is one. */
  let followers: () => number;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens({ withShell: true }), simulate: 1 });
    served = await listenApp(bridge.app);
    client = new DeviceBridgeClient({ baseUrl: served.url, token: SHELL_TOKEN });
    leaseId = (await client.acquireLease({ ttlSeconds: 120 })).id;
    const android = bridge.node.simulator!.devices[0]!.android as SimAndroidHandle;
    followers = () => android.device.log.followers;
  });
  afterAll(async () => {
    await served?.close();
    await bridge?.cleanup();
  });

  const collect = async (request: Parameters<DeviceBridgeClient['shellStream']>[1]) => {
    const out = { stdout: '', stderr: '', exit: undefined as number | undefined, events: 0 };
    for await (const e of client.shellStream(leaseId, request)) {
      out.events++;
      if ('exit' in e) out.exit = e.exit;
      else out[e.stream] += Buffer.from(e.data).toString('utf8');
    }
    return out;
  };

  it('streams stdout and stderr and ends with the exit status; argv is quoted', async () => {
    const quoted = await collect({ argv: ['echo', 'a b', "it's; echo pwned", '$HOME'] });
    expect(quoted).toMatchObject({ stdout: "a b it's; echo pwned $HOME\n", stderr: '', exit: 0 });
    const failed = await collect({ command: 'echo out; echo err >&2; exit 3' });
    expect(failed).toMatchObject({ stdout: 'out\n', stderr: 'err\n', exit: 3 });
  });

  it('the first output arrives while the command still runs', async () => {
    // The command sleeps far past the test's timeout after its first line: only a streamed line
    // arrives in time. Leaving the loop closes the command.
    let first: unknown;
    for await (const e of client.shellStream(leaseId, { command: 'echo first; sleep 600; echo second' })) {
      first = e;
      break;
    }
    expect(first).toMatchObject({ stream: 'stdout' });
  });

  it('a command past its deadline ends with TIMEOUT and is closed on the device', async () => {
    // logcat never ends by itself: an answer at all is the deadline's.
    const err = await collect({ argv: ['logcat'], timeoutMs: 400 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeClientError);
    expect(err).toMatchObject({ code: 'TIMEOUT' });
    expect((err as Error).message).toContain('400 ms');
    await until('logcat to stop on the device', () => followers() === 0);
  });

  it('a client that disconnects closes the command on the device', async () => {
    const abort = new AbortController();
    const reading = (async () => {
      for await (const _ of client.shellStream(leaseId, { argv: ['logcat'] }, abort.signal)) {
        // reading until aborted
      }
    })().catch((e: unknown) => e);
    await until('logcat to run on the device', () => followers() === 1, 5000);
    abort.abort();
    expect(await reading).toBeInstanceOf(Error);
    await until('logcat to stop on the device', () => followers() === 0);
  });

  it('refuses a token without the shell capability (403) and another tenant (404); bad bodies 400', async () => {
    const path = `/v1/leases/${leaseId}/shell/stream`;
    const plain = await contractCall(bridge, CLIENT_TOKEN)('POST', path, { argv: ['true'] });
    expect(plain.status).toBe(403);
    expect(plain.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { capability: 'shell' } });
    const other = await contractCall(bridge, OTHER_SHELL_TOKEN)('POST', path, { argv: ['true'] });
    expect(other.status).toBe(404);
    const shell = contractCall(bridge, SHELL_TOKEN);
    for (const body of [{}, { argv: ['true'], command: 'true' }, { argv: ['true'], maxOutputBytes: 5 }]) {
      const res = await shell('POST', path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const newline = await shell('POST', path, { argv: ['echo', 'a\nb'] });
    expect(newline.status).toBe(400);
    expect(newline.body.error.message).toContain('line break');
  });

  it('CLI: devicebridge shell --stream prints as it comes and passes the exit status through', async () => {
    const env = { DEVICEBRIDGE_URL: served.url, DEVICEBRIDGE_TOKEN: SHELL_TOKEN };
    const ran = await runCli(
      ['shell', '--stream', '--lease', leaseId, '--command', 'echo a; echo b >&2; exit 4'],
      { env },
    );
    expect(ran).toMatchObject({ code: 4, stdout: 'a\n', stderr: 'b\n' });
    const json = await runCli(['shell', '--stream', '--json', '--lease', leaseId, '--', 'echo', 'j'], {
      env,
    });
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ stream: 'stdout', data: Buffer.from('j\n').toString('base64') });
    expect(lines.at(-1)).toMatchObject({ exit: 0 });
    const timedOut = await runCli(
      ['shell', '--stream', '--lease', leaseId, '--timeout', '200', '--', 'sleep', '3'],
      { env },
    );
    expect(timedOut.code).toBe(1);
    expect(timedOut.stderr).toContain('TIMEOUT');
    const usage = await runCli(['shell', '--stream', '--max-output', '5', '--lease', leaseId, '--', 'true'], {
      env,
    });
    expect(usage.code).toBe(2);
  });

  it('the lease ending ends the stream (LEASE_EXPIRED) and closes the command on the device', async () => {
    const reading = collect({ argv: ['logcat'] }).catch((e: unknown) => e);
    await until('logcat to run on the device', () => followers() === 1, 5000);
    const released = await client.releaseLease(leaseId);
    expect(released.teardown!.failures).toEqual([]);
    const err = await reading;
    expect(err).toBeInstanceOf(BridgeClientError);
    expect(err).toMatchObject({ code: 'LEASE_EXPIRED' });
    await until('logcat to stop on the device', () => followers() === 0);
  });
});
