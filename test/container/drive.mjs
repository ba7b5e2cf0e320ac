// Drives the compose stack through its load balancer (plain Node 22+, no dependencies): waits for
// the fleet, publishes the fixture snapshot helper (to S3, through any bridge), takes a lease and a
// snapshot, SIGKILLs the bridge container that owns the leased device, and checks the takeover:
// every device owned by a survivor and online again, the lease still active with the same fencing
// token, and the next snapshot and gesture served. Prints one line per step with its timing; exits
// non-zero naming the first check that failed.
//
// Environment: LB_URL, TOKEN, PROJECT (container names are PROJECT_SERVICE_1), DEVICES (20),
// TAKEOVER_BOUND_MS (30000: 3 heartbeats of 2 s + health passes + tunnel connect, with room).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const LB = process.env.LB_URL;
const TOKEN = process.env.TOKEN;
const PROJECT = process.env.PROJECT;
const DEVICES = Number(process.env.DEVICES || 20);
const TAKEOVER_BOUND_MS = Number(process.env.TAKEOVER_BOUND_MS || 30_000);
const APK = new URL('../fixtures/apk/snapshot-helper-v2.apk', import.meta.url);
const t0 = Date.now();

const log = (msg) => process.stdout.write(`drive [${((Date.now() - t0) / 1000).toFixed(1)} s] ${msg}\n`);
function fail(msg) {
  process.stderr.write(`drive: FAILED: ${msg}\n`);
  process.exit(1);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(method, path, body, headers = {}) {
  const init = {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...headers },
    signal: AbortSignal.timeout(30_000),
  };
  if (body instanceof Uint8Array) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['content-type'] = 'application/json';
  }
  try {
    const res = await fetch(`${LB}${path}`, init);
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, json, text, by: res.headers.get('x-devicebridge-forwarded-by') };
  } catch (err) {
    return { status: 0, json: null, text: String(err.cause?.code ?? err.message), by: null };
  }
}

async function until(what, boundMs, probe) {
  const start = Date.now();
  let last;
  while (Date.now() - start < boundMs) {
    last = await probe();
    if (last.ok) return { ms: Date.now() - start, value: last.value };
    await sleep(250);
  }
  fail(`${what} not within ${boundMs} ms (last: ${last?.why})`);
}

const devicesNow = async () => {
  const r = await call('GET', '/v1/devices');
  return r.status === 200 ? r.json.devices : null;
};

// Each bridge's own /readyz (the balancer answers for any one of them): the image's healthcheck
// script inside the container, which exits 0 only on 200.
const BRIDGES = ['bridge1', 'bridge2', 'bridge3'];
function bridgeReady(bridge) {
  try {
    execFileSync(
      'podman',
      ['exec', `${PROJECT}_${bridge}_1`, 'node', '/app/infra/healthcheck.mjs', '/readyz'],
      {
        stdio: 'ignore',
        timeout: 10_000,
      },
    );
    return true;
  } catch {
    return false;
  }
}

// 1. The fleet: every bridge ready (a lease may land on any of their devices), ready through the
// balancer, every device registered, online and owned.
const ready = await until('the fleet ready with every device online', 120_000, async () => {
  const notReady = BRIDGES.filter((b) => !bridgeReady(b));
  if (notReady.length > 0) return { ok: false, why: `not ready: ${notReady.join(', ')}` };
  const r = await call('GET', '/readyz');
  if (r.status !== 200) return { ok: false, why: `readyz ${r.status} ${r.text.slice(0, 200)}` };
  const devices = await devicesNow();
  if (devices === null) return { ok: false, why: 'GET /v1/devices failed' };
  const online = devices.filter((d) => d.state === 'online' && /^bridge[123]$/.test(d.ownerNode ?? ''));
  return online.length === DEVICES
    ? { ok: true, value: devices }
    : { ok: false, why: `${online.length}/${devices.length} online and owned` };
});
const owners = (ds) => {
  const count = new Map();
  for (const d of ds) count.set(d.ownerNode, (count.get(d.ownerNode) ?? 0) + 1);
  return [...count].map(([n, c]) => `${n}: ${c}`).join(', ');
};
log(`fleet ready in ${(ready.ms / 1000).toFixed(1)} s: ${DEVICES} devices online (${owners(ready.value)})`);

// 2. Publish the helper through the balancer: the release lands in S3, every bridge serves it.
const published = await call(
  'POST',
  '/v1/helpers/android-snapshot-helper/releases?version=0.2.0',
  new Uint8Array(readFileSync(APK)),
  { 'content-type': 'application/vnd.android.package-archive' },
);
if (published.status !== 201 && published.status !== 200)
  fail(`publish: ${published.status} ${published.text}`);
for (let i = 0; i < 3; i++) {
  const m = await call('GET', '/v1/helpers/android-snapshot-helper/manifest');
  if (m.status !== 200 || m.json.version !== '0.2.0') fail(`manifest after publish: ${m.status} ${m.text}`);
}
log('helper 0.2.0 published (S3) and served by the fleet');

// 3. A lease and a snapshot through the balancer.
const acquired = await call('POST', '/v1/leases', {
  ttlSeconds: 600,
  selector: { labels: { simulated: 'true' } },
});
if (acquired.status !== 201) fail(`acquire: ${acquired.status} ${acquired.text}`);
const lease = acquired.json;
const snap = async () =>
  call('POST', `/v1/leases/${lease.id}/snapshot`, { format: 'json', deadlineMs: 20_000 });
const first = await snap();
if (first.status !== 200) fail(`snapshot: ${first.status} ${first.text.slice(0, 400)}`);
const device = ready.value.find((d) => d.id === lease.deviceId);
if (!device) fail(`leased device ${lease.deviceId} is not listed`);
const victim = device.ownerNode;
log(
  `lease ${lease.id} on ${device.endpoint} (owner ${victim}, fencing token ${lease.fencingToken}); snapshot ${first.status} (transport ${first.json.transport ?? '?'})`,
);

// 4. The owner dies: SIGKILL its container.
execFileSync('podman', ['kill', '--signal', 'KILL', `${PROJECT}_${victim}_1`], { stdio: 'ignore' });
const killedAt = Date.now();
log(`SIGKILLed container ${PROJECT}_${victim}_1`);

// 5. Takeover: every device owned by a survivor and online, within the bound.
const taken = await until(`takeover of ${victim}'s devices`, TAKEOVER_BOUND_MS, async () => {
  const devices = await devicesNow();
  if (devices === null) return { ok: false, why: 'GET /v1/devices failed' };
  const bad = devices.filter((d) => d.ownerNode === victim || d.state !== 'online');
  return devices.length === DEVICES && bad.length === 0
    ? { ok: true, value: devices }
    : {
        ok: false,
        why: `${bad.length} not yet taken over (${bad
          .map((d) => `${d.endpoint}:${d.ownerNode}/${d.state}`)
          .slice(0, 3)
          .join(' ')})`,
      };
});
log(
  `every device owned and online again ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill (${owners(taken.value)})`,
);

// 6. The lease survived with the same fencing token; the next lease-scoped calls are served.
const seen = await call('GET', `/v1/leases/${lease.id}`);
if (seen.status !== 200 || seen.json.state !== 'active' || seen.json.fencingToken !== lease.fencingToken) {
  fail(`lease after takeover: ${seen.status} ${seen.text}`);
}
const again = await until('a snapshot on the new owner', 30_000, async () => {
  const r = await snap();
  return r.status === 200
    ? { ok: true, value: r }
    : { ok: false, why: `${r.status} ${r.text.slice(0, 200)}` };
});
const tap = await call('POST', `/v1/leases/${lease.id}/gestures`, { kind: 'tap', x: 10, y: 10 });
if (tap.status !== 200) fail(`gesture after takeover: ${tap.status} ${tap.text.slice(0, 300)}`);
const newOwner = taken.value.find((d) => d.id === lease.deviceId).ownerNode;
log(
  `lease ${lease.id} still active, fencing token ${seen.json.fencingToken}; snapshot ${again.value.status} and tap ${tap.status} on the new owner ${newOwner}`,
);

// 7. Release: the teardown runs on the owner.
const released = await call('DELETE', `/v1/leases/${lease.id}`);
if (released.status !== 200) fail(`release: ${released.status} ${released.text}`);
log(`released (teardown: ${(released.json.teardown?.actions ?? []).join('; ').slice(0, 200)})`);
log('OK');
