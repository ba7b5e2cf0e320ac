/**
 * POST /v1/leases/{id}/shell through the HTTP app, over a simulated device reached through the real
 * adb server: exit codes, stderr, the output cap, the deadline, the `shell` capability and tenancy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHELL_LIMITS } from '../../src/api/farm.ts';
import { DEFAULT_SHELL_GATE_LIMITS } from '../../src/helpers/farm/shell-gate.ts';
import {
  ADMIN_TOKEN,
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
import { waitFor } from '../support/wait-for.ts';

describe('lease shell', () => {
  let bridge: DeviceBridge;
  let shell: ReturnType<typeof contractCall>;
  let leaseId: string;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens({ withShell: true }), simulate: 1 });
    shell = contractCall(bridge, SHELL_TOKEN);
    const acquired = await shell('POST', '/v1/leases', { ttlSeconds: 120 });
    expect(acquired.status).toBe(201);
    leaseId = acquired.body.id;
  });
  afterAll(async () => bridge?.cleanup());

  const run = (body: unknown, as = shell) => as('POST', `/v1/leases/${leaseId}/shell`, body);

  it('runs an argv with each argument quoted: metacharacters reach the command as data', async () => {
    const res = await run({ argv: ['echo', 'a b', "it's; echo pwned", '$HOME'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ exitCode: 0, stdout: "a b it's; echo pwned $HOME\n", stderr: '' });
    expect(res.body.truncated).toBe(false);
  });

  it('a command string runs in the shell: stdout, stderr and the exit code', async () => {
    const res = await run({ command: 'echo out; echo err >&2; exit 3' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', truncated: false });
    const missing = await run({ argv: ['ls', '/no/such/dir'] });
    expect(missing.body.exitCode).not.toBe(0);
    expect(missing.body.stderr).toContain('/no/such/dir');
  });

  it('cuts output at maxOutputBytes and says so: the command is stopped there, its exit status unknown', async () => {
    const res = await run({ argv: ['echo', 'x'.repeat(500)], maxOutputBytes: 100 });
    expect(res.status).toBe(200);
    expect(res.body.stdout).toBe('x'.repeat(100));
    expect(res.body.truncated).toBe(true);
    expect(res.body.exitCode).toBeNull();
    const exact = await run({ argv: ['echo', '-n', 'x'.repeat(100)], maxOutputBytes: 100 });
    expect(exact.body).toMatchObject({ stdout: 'x'.repeat(100), truncated: false, exitCode: 0 });
  });

  it('a command that never stops writing is stopped at the cap instead of running into its deadline', async () => {
    const res = await run({ argv: ['yes', 'flood'], maxOutputBytes: 64 * 1024, timeoutMs: 20_000 });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body.truncated).toBe(true);
    expect(res.body.exitCode).toBeNull();
    expect(res.body.stdout.length).toBe(64 * 1024);
    expect(res.body.stdout.startsWith('flood\nflood\n')).toBe(true);
    // The device still answers.
    expect((await run({ argv: ['true'] })).body.exitCode).toBe(0);
  }, 60_000);

  it('a command past its deadline is TIMEOUT naming the deadline', async () => {
    const res = await run({ argv: ['sleep', '5'], timeoutMs: 300 });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe('TIMEOUT');
    expect(res.body.error.message).toContain('300 ms');
    // The device still answers afterwards.
    expect((await run({ argv: ['true'] })).body.exitCode).toBe(0);
  });

  it('refuses a body with both or neither of argv and command, and argv with a line break', async () => {
    for (const body of [{}, { argv: ['true'], command: 'true' }, { argv: [] }]) {
      const res = await run(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_ARGUMENT');
    }
    const newline = await run({ argv: ['echo', 'a\nb'] });
    expect(newline.status).toBe(400);
    expect(newline.body.error.message).toContain('line break');
  });

  it('a client token without the shell capability is refused (403 naming it); an admin may', async () => {
    const plain = await run({ argv: ['true'] }, contractCall(bridge, CLIENT_TOKEN));
    expect(plain.status).toBe(403);
    expect(plain.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { capability: 'shell' } });
    expect(plain.body.error.message).toContain('shell capability');
    const admin = await run({ argv: ['true'] }, contractCall(bridge, ADMIN_TOKEN));
    expect(admin.status).toBe(200);
  });

  it("another tenant's shell token does not reach the lease (404)", async () => {
    const res = await run({ argv: ['true'] }, contractCall(bridge, OTHER_SHELL_TOKEN));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('CLI: devicebridge shell passes stdout, stderr and the exit code through', async () => {
    const served = await listenApp(bridge.app);
    try {
      const env = { DEVICEBRIDGE_URL: served.url, DEVICEBRIDGE_TOKEN: SHELL_TOKEN };
      const ok = await runCli(['shell', '--lease', leaseId, '--', 'echo', '-n', 'a b'], { env });
      expect(ok).toMatchObject({ code: 0, stdout: 'a b' });
      const failed = await runCli(['shell', '--lease', leaseId, '--command', 'echo oops >&2; exit 7'], {
        env,
      });
      expect(failed).toMatchObject({ code: 7, stdout: '', stderr: 'oops\n' });
      const json = await runCli(['shell', '--lease', leaseId, '--json', '--', 'false'], { env });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ exitCode: 1, truncated: false });
      const refused = await runCli(['shell', '--lease', leaseId, '--', 'true'], {
        env: { ...env, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN },
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('PERMISSION_DENIED');
      const usage = await runCli(['shell', '--lease', leaseId], { env });
      expect(usage.code).toBe(2);
    } finally {
      await served.close();
    }
  });

  it('after release the lease has no shell (410)', async () => {
    const other = await shell('POST', '/v1/leases', { ttlSeconds: 60 });
    // One simulated device: the first lease holds it; release it and lease again.
    expect(other.status).toBe(409);
    expect((await shell('DELETE', `/v1/leases/${leaseId}`)).status).toBe(200);
    const res = await run({ argv: ['true'] });
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe('LEASE_EXPIRED');
  });
});

describe('lease shell under load from one client', () => {
  let bridge: DeviceBridge;
  let shell: ReturnType<typeof contractCall>;
  let leaseId: string;
  beforeAll(async () => {
    bridge = await testDeviceBridge({
      auth: testTokens({ withShell: true }),
      simulate: 1,
      env: { DEVICEBRIDGE_RATE_EXPENSIVE: '3' },
    });
    shell = contractCall(bridge, SHELL_TOKEN);
    const acquired = await shell('POST', '/v1/leases', { ttlSeconds: 120 });
    expect(acquired.status).toBe(201);
    leaseId = acquired.body.id;
  });
  afterAll(async () => bridge?.cleanup());

  it('shell calls, collected or streamed, count among the expensive calls (429 with Retry-After)', async () => {
    const statuses: number[] = [];
    for (const path of ['shell', 'shell/stream', 'shell', 'shell/stream']) {
      const res = await bridge.app.request(`/v1/leases/${leaseId}/${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${SHELL_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ argv: ['true'] }),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
      if (res.status === 429) expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe('lease shell: commands at a time on one lease', () => {
  let bridge: DeviceBridge;
  let leaseId: string;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens({ withShell: true }), simulate: 1 });
    const acquired = await contractCall(bridge, SHELL_TOKEN)('POST', '/v1/leases', { ttlSeconds: 120 });
    expect(acquired.status).toBe(201);
    leaseId = acquired.body.id;
  });
  afterAll(async () => bridge?.cleanup());

  const post = (path: string, body: unknown) =>
    bridge.app.request(`/v1/leases/${leaseId}/${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${SHELL_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('past the per-lease limit a command is refused (429 naming it) until one of the running ends', async () => {
    const { perLease } = DEFAULT_SHELL_GATE_LIMITS;
    const running: ReadableStreamDefaultReader<Uint8Array>[] = [];
    for (let i = 0; i < perLease; i++) {
      const res = await post('shell/stream', { argv: ['sleep', '60'], timeoutMs: 60_000 });
      expect(res.status).toBe(200);
      running.push(res.body!.getReader());
    }
    const refused = await post('shell', { argv: ['true'] });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('RATE_LIMITED');
    expect(body.error.message).toContain(`at most ${perLease} at a time`);

    // One ends (its client goes away): the next command runs once its place is given back.
    await running.shift()!.cancel();
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      const res = await post('shell', { argv: ['true'] });
      status = res.status;
      await res.arrayBuffer();
      if (status !== 200) {
        expect(status).toBe(429);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    expect(status).toBe(200);
    for (const r of running) await r.cancel();
  });
});

describe("lease shell: the node's output budget", () => {
  // The budget is filled by collected commands at the largest maxOutputBytes (each holds twice it,
  // stdout and stderr): two leases of one tenant, each at its per-lease limit.
  const { outputBudgetBytes, perLease } = DEFAULT_SHELL_GATE_LIMITS;
  const holds = 2 * SHELL_LIMITS.maxOutputBytes;
  const holders = outputBudgetBytes / holds;
  let bridge: DeviceBridge;
  let acme: ReturnType<typeof contractCall>;
  let globex: ReturnType<typeof contractCall>;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens({ withShell: true }), simulate: 3 });
    acme = contractCall(bridge, SHELL_TOKEN);
    globex = contractCall(bridge, OTHER_SHELL_TOKEN);
  });
  afterAll(async () => bridge?.cleanup());

  const acquire = async (call: ReturnType<typeof contractCall>) => {
    const acquired = await call('POST', '/v1/leases', { ttlSeconds: 120 });
    expect(acquired.status).toBe(201);
    return acquired.body.id as string;
  };

  /** Another tenant's streamed `echo hi` on `lease`: the answer's status and text (NDJSON or an error). */
  const stream = async (lease: string) => {
    const res = await bridge.app.request(`/v1/leases/${lease}/shell/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${OTHER_SHELL_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ argv: ['echo', 'hi'] }),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
  };

  it('a streamed command is refused (429 output-budget) while the budget is full, admitted once the holders end', async () => {
    // The arithmetic the test relies on: the holders fill the budget exactly, within the per-lease
    // and per-tenant limits.
    expect(Number.isInteger(holders)).toBe(true);
    expect(holders).toBeLessThanOrEqual(2 * perLease);
    expect(holders).toBeLessThanOrEqual(DEFAULT_SHELL_GATE_LIMITS.perTenant);
    const holding = [await acquire(acme), await acquire(acme)];
    const streamer = await acquire(globex);
    const gate = bridge.node.room.farm.shellGate;
    const running = Array.from({ length: holders }, (_, i) =>
      acme('POST', `/v1/leases/${holding[i % 2]}/shell`, {
        argv: ['sleep', '600'],
        timeoutMs: SHELL_LIMITS.maxTimeoutMs,
        maxOutputBytes: SHELL_LIMITS.maxOutputBytes,
      }),
    );
    await waitFor(() => gate.heldBytes === outputBudgetBytes, {
      what: 'the holders to fill the output budget',
    });

    // Another tenant's streamed command, on another lease: only the node's budget is in the way.
    const refused = await stream(streamer);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.retryAfter).toBe('1');
    const { error } = JSON.parse(refused.text);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 'output-budget' } });
    expect(error.message).toContain('output budget of this node');

    // The holders end (their leases released: teardown stops their commands).
    for (const lease of holding) expect((await acme('DELETE', `/v1/leases/${lease}`)).status).toBe(200);
    const ended = await Promise.all(running);
    expect(ended.map((r) => r.status)).not.toContain(200);
    expect(gate.heldBytes).toBe(0);

    const admitted = await stream(streamer);
    expect(admitted.status, admitted.text).toBe(200);
    expect(admitted.text).toContain('"exit":0');
  }, 120_000);
});
