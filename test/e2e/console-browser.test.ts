/**
 * The web console in a real browser: playwright-core driving Debian's chromium (installed by
 * .ci/prereqs; never downloaded) against a real `devicebridge serve --simulate 3` with tokens.
 * Every page passes an axe-core check; page screenshots go to .tmp/console/ (not committed).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { BridgeClientError, DeviceBridgeClient } from '../../src/client/index.ts';
import { fixturePublicKey } from '../support/adb-keys.ts';
import {
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  fixture,
  OTHER_TENANT_TOKEN,
  tempDir,
  writeTokensFile,
} from '../support/bridge.ts';
import { BIN, publishFixtureHelper, startCli, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';
import { publishGlassA11y, publishGlassAgent } from '../support/glass.ts';

const SHOTS = path.resolve(import.meta.dirname, '../../.tmp/console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

function chromiumPath(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error("Debian's chromium is missing: bash .ci/prereqs installs it (apt-get install chromium)");
  }
}

/** axe-core's violations on the page (serious and critical ones fail the test). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{
            violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe;
    return (await axe.run()).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  return result.map((v) => `${v.impact} ${v.id}: ${v.targets.slice(0, 3).join(', ')}`);
}

describe('console in chromium (e2e)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let server: Awaited<ReturnType<typeof startCli>>;
  let url: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  /** The lease the client acquires from the UI (the tenant-isolation test looks for it). */
  let leaseId: string | null = null;

  const signIn = async (token: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${url}/console`);
    expect(page.url()).toBe(`${url}/console/sign-in`);
    await page.getByLabel('Bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/console/devices`);
    return page;
  };
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    tmp = await tempDir();
    await publishFixtureHelper(tmp.dir);
    await publishGlassAgent(new FsArtifactStore(path.join(tmp.dir, 'artifacts')), tmp.dir);
    await publishGlassA11y(new FsArtifactStore(path.join(tmp.dir, 'artifacts')));
    server = await startCli(['serve', '--port', '0', '--data-dir', tmp.dir, '--simulate', '3', '--json'], {
      env: {
        DEVICEBRIDGE_ADB_PORT: String(await freePort()),
        DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir),
        DEVICEBRIDGE_HEALTH_INTERVAL_MS: '500',
        LOG_LEVEL: 'silent',
      },
    });
    url = (JSON.parse(server.firstLine) as { url: string }).url;
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await waitForExit(server.child).catch(() => server.child.kill('SIGKILL'));
    }
    await tmp?.cleanup();
  });

  it('sign-in: a wrong token is refused on the form; the session cookie is HttpOnly and SameSite=Strict', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${url}/console/sign-in`);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('Bearer token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#token-error').textContent()).toContain('not valid');
    await page.getByLabel('Bearer token').fill(CLIENT_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/console/devices`);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'devicebridge_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(CLIENT_TOKEN);
    // The cookie alone does not change state: an API call without the CSRF token is refused.
    const refused = await page.evaluate(
      async () =>
        (
          await fetch('/v1/leases', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: '{}',
          })
        ).status,
    );
    expect(refused).toBe(403);
  });

  it('admin: three devices in the live table, admin controls, API errors next to the field; publish by upload', async () => {
    const page = await signIn(ADMIN_TOKEN);
    await expect.poll(() => page.locator('#devices tbody tr').count()).toBe(3);
    await expect.poll(() => page.locator('#devices tbody').textContent()).toContain('online');
    expect(await page.locator('#register-device').count()).toBe(1);
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(3);
    await page.getByLabel('State').selectOption('offline');
    expect(await page.locator('#devices tbody tr').count()).toBe(0);
    await page.getByLabel('State').selectOption('');
    await page.getByLabel('Endpoint (host:port)').fill('10.1.2.3:5555');
    await page.getByRole('button', { name: 'Register' }).click();
    await expect.poll(() => page.locator('#register-error').textContent()).toContain('10.1.2.3');
    expect(await page.getByLabel('Endpoint (host:port)').getAttribute('aria-invalid')).toBe('true');
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'devices-admin');

    // A tunnel to a simulated device of another process: registered from the form, then its cable is
    // pulled (the simulator's control API) and the live table shows it offline, without a reload.
    const sim = spawn(process.execPath, [BIN, 'simulate', '--port', '0', '--json', '--control-port', '0'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const lines = createInterface({ input: sim.stdout! })[Symbol.asyncIterator]();
      const control = (JSON.parse((await lines.next()).value as string) as { control: string }).control;
      const { address } = JSON.parse((await lines.next()).value as string) as { address: string };
      await page.getByLabel('Endpoint (host:port)').fill(address);
      await page.getByRole('button', { name: 'Register' }).click();
      await expect.poll(() => page.locator('#devices tbody tr').count()).toBe(4);
      const row = page.locator(`#devices tbody tr[data-device="${address.replace(':', '-')}"]`);
      await expect.poll(() => row.locator('td').nth(4).textContent(), { timeout: 20_000 }).toBe('online');
      const marker = await page.evaluate('window.__sameDocument = true');
      expect(marker).toBe(true);
      expect((await fetch(`${control}/devices/0/unplug`, { method: 'POST' })).status).toBe(200);
      await expect
        .poll(() => row.locator('td').nth(4).textContent(), { timeout: 20_000 })
        .toMatch(/^offline/);
      expect(await page.evaluate('window.__sameDocument')).toBe(true);
      await shot(page, 'devices-offline');
      await page.getByRole('button', { name: `Remove ${address.replace(':', '-')}` }).click();
      await expect.poll(() => page.locator('#devices tbody tr').count()).toBe(3);
    } finally {
      sim.kill('SIGTERM');
      await waitForExit(sim).catch(() => sim.kill('SIGKILL'));
    }

    await page.getByRole('link', { name: 'Releases', exact: true }).click();
    await expect
      .poll(() => page.locator('#helpers tbody').textContent())
      .toContain('android-snapshot-helper');
    await page.getByLabel('Version').fill('0.1.0');
    await page.getByLabel('APK or dex jar').setInputFiles(fixture('snapshot-helper-v1.apk'));
    await page.getByRole('button', { name: 'Upload and publish' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toContain('0.1.0: published');
    expect(await page.locator('#publish-progress').getAttribute('value')).toBe('100');
    await expect.poll(() => page.locator('#manifest').textContent()).toContain('"version": "0.1.0"');
    // One row per version, newest first, from the manifest the API serves: sha256, signer, installArgs.
    const row = (v: string) =>
      page.locator(`#helpers tbody tr[data-helper="android-snapshot-helper"][data-version="${v}"]`);
    await expect.poll(() => row('0.1.0').count()).toBe(1);
    const served = (await page.evaluate(`(async () => (await fetch(
      '/v1/helpers/android-snapshot-helper/versions/0.1.0/manifest')).json())()`)) as {
      sha256: string;
      signingCertSha256?: string | null;
      installArgs: string[];
    };
    expect(await row('0.1.0').locator('td.sha256').textContent()).toBe(served.sha256);
    expect(await row('0.1.0').locator('td.signer').textContent()).toBe(served.signingCertSha256 ?? 'none');
    expect(await row('0.1.0').locator('td.install-args').textContent()).toBe(served.installArgs.join(' '));
    expect(await row('0.2.0').textContent()).toContain('latest');
    expect(await row('0.1.0').textContent()).not.toContain('latest');
    const order = await page
      .locator('#helpers tbody tr[data-helper="android-snapshot-helper"]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-version')));
    expect(order.indexOf('0.2.0')).toBeLessThan(order.indexOf('0.1.0'));
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'releases-admin');
  }, 150_000);

  it('client: acquire from the UI, inspect, select a node by its box, tap and see the screen change', async () => {
    const page = await signIn(CLIENT_TOKEN);
    await expect.poll(() => page.locator('#devices tbody tr').count()).toBe(3);
    expect(await page.locator('#register-device').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    // A token without capabilities: the page says so, and offers no adb endpoint, only the hint.
    expect(await page.locator('#capabilities').textContent()).toBe('Your token may: nothing beyond its role');
    expect(await page.locator('#adb-endpoint').count()).toBe(0);
    expect(await page.locator('#adb-hint').textContent()).toContain('needs the adb capability');
    await page.getByLabel('TTL (s)').fill('600');
    await page.getByRole('button', { name: 'Acquire' }).click();
    await expect.poll(() => page.locator('#leases tbody tr').count()).toBe(1);
    leaseId = await page.locator('#leases tbody tr').getAttribute('data-lease');
    expect(leaseId).toMatch(/\S/);
    await expect.poll(() => page.locator('#status').textContent()).toContain(`acquired ${leaseId}`);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'leases-client');

    await page.getByRole('link', { name: 'Inspect', exact: true }).click();
    await page.waitForURL(/\/console\/inspector\?lease=/);
    await expect.poll(() => page.locator('#lease-select').inputValue()).toBe(leaseId);
    await page.getByRole('button', { name: 'Take snapshot' }).click();
    await expect
      .poll(() => page.locator('#status').textContent(), { timeout: 30_000 })
      .toContain('nodes; screen 1080');
    // A box that is on top at its centre (so a click reaches it), of a node with text.
    // (A string: this runs in the page, and the tests are compiled without the DOM library.)
    const ref = (await page.evaluate(`(() => {
      for (const box of document.querySelectorAll('#boxes .box')) {
        const r = box.getBoundingClientRect();
        if (r.width < 20 || r.height < 12) continue;
        if (document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) !== box) continue;
        if (box.title.includes('"')) return box.dataset.ref;
      }
      return null;
    })()`)) as string | null;
    expect(ref).toMatch(/^e\d+$/);
    await page.locator(`#boxes .box[data-ref="${ref}"]`).click();
    await expect
      .poll(() => page.locator(`#tree li[data-ref="${ref}"]`).getAttribute('aria-selected'))
      .toBe('true');
    expect(await page.locator('#tree li[aria-selected="true"]').count()).toBe(1);
    expect(await page.locator('#attrs').textContent()).toContain(ref!);
    await page.getByRole('searchbox', { name: 'Search' }).fill('cancel');
    expect(await page.locator('#tree li').count()).toBeGreaterThan(0);
    expect(await page.locator('#tree li').count()).toBeLessThan(10);
    await page.getByRole('searchbox', { name: 'Search' }).fill('');

    // Keyboard: Tab reaches the boxes (one tab stop, roving), arrows move between nodes in tree
    // order with a visible focus, Enter selects the focused node in the tree.
    expect(await page.locator('#boxes .box[tabindex="0"]').count()).toBe(1);
    await page.getByLabel('Tap where I click').focus();
    await page.keyboard.press('Tab');
    const focused = () =>
      page.evaluate('document.activeElement?.dataset?.ref ?? null') as Promise<string | null>;
    expect(await focused()).toBe(ref);
    await page.keyboard.press('Home');
    const first = await focused();
    expect(first).toMatch(/^e\d+$/);
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
    const third = await focused();
    expect(third).not.toBe(first);
    expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe(third);
    await shot(page, 'inspector-keyboard-focus');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator(`#tree li[data-ref="${third}"]`).getAttribute('aria-selected'))
      .toBe('true');
    expect(await page.locator(`#boxes .box[data-ref="${third}"]`).getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('#boxes .box[tabindex="0"]').getAttribute('data-ref')).toBe(third);
    // Back to the node chosen by its box, for the picture.
    await page.locator(`#boxes .box[data-ref="${ref}"]`).click();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'inspector-selected');
    // The README's picture (docs/console-inspector.jpg is a copy of it).
    await page
      .locator('main')
      .screenshot({ path: path.join(SHOTS, 'inspector.jpg'), type: 'jpeg', quality: 50 });

    const before = await page.locator('#screenshot').screenshot();
    const ready = await page.locator('#screen').getAttribute('data-ready');
    await page.getByLabel('Tap where I click').check();
    await page.locator('#screenshot').click({ position: { x: 100, y: 150 } });
    await expect
      .poll(() => page.locator('#screen').getAttribute('data-ready'), { timeout: 30_000 })
      .not.toBe(ready);
    const after = await page.locator('#screenshot').screenshot();
    expect(Buffer.compare(before, after)).not.toBe(0);
    await shot(page, 'inspector-after-tap');

    // Text input through the glass agent: the exact code points reach the focused field.
    const typed = 'héllo 👋 你好';
    const typedReady = await page.locator('#screen').getAttribute('data-ready');
    await page.getByLabel('Type into the focused field').fill(typed);
    await page.getByRole('button', { name: 'Type', exact: true }).click();
    await expect
      .poll(() => page.locator('#screen').getAttribute('data-ready'), { timeout: 30_000 })
      .not.toBe(typedReady);
    await page.getByRole('searchbox', { name: 'Search' }).fill(typed);
    expect(await page.locator('#tree li').count()).toBe(1);
    await page.getByRole('searchbox', { name: 'Search' }).fill('');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download raw XML' }).click();
    const file = await (await download).path();
    expect(readFileSync(file, 'utf8')).toContain('<hierarchy');

    // Admins see who holds the device: the lease and its tenant.
    const admin = await signIn(ADMIN_TOKEN);
    await expect
      .poll(() => admin.locator('#devices tbody').textContent())
      .toContain(`${leaseId} (tenant acme)`);
    // ... and which helper release the inspector's snapshot installed there (semver and code).
    expect(await admin.locator('#devices tbody').textContent()).toContain(
      'android-snapshot-helper 0.2.0 (code 2)',
    );
  }, 150_000);

  it("the inspector's Run doctor button shows the report: every check passed on the simulator, one row each", async () => {
    expect(leaseId, 'the client test acquired a lease').toMatch(/\S/);
    const page = await signIn(CLIENT_TOKEN);
    await page.goto(`${url}/console/inspector?lease=${encodeURIComponent(leaseId!)}`);
    await expect.poll(() => page.locator('#lease-select').inputValue()).toBe(leaseId);
    expect(await page.locator('#doctor-report').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Run doctor' }).click();
    await expect
      .poll(() => page.locator('#doctor-summary').textContent(), { timeout: 60_000 })
      .toMatch(
        /^All checks passed: 14 passed, 0 failed, 0 skipped in \d+ ms on DeviceBridge DeviceBridge Sim/,
      );
    expect(await page.locator('#doctor-report').isVisible()).toBe(true);
    const rows = page.locator('#doctor-report tbody tr');
    expect(await rows.count()).toBe(14);
    expect(await page.locator('#doctor-report tbody tr td:nth-child(2)').allTextContents()).toEqual(
      Array(14).fill('passed'),
    );
    expect(await rows.first().getAttribute('data-check')).toBe('helpers-installed');
    expect(await rows.last().getAttribute('data-check')).toBe('settings-restored');
    expect(await page.getByRole('button', { name: 'Run doctor' }).isEnabled()).toBe(true);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download the report (JSON)' }).click();
    const report = JSON.parse(readFileSync(await (await download).path(), 'utf8')) as {
      ok: boolean;
      leaseId: string;
    };
    expect(report).toMatchObject({ ok: true, leaseId });
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'inspector-doctor');
  }, 90_000);

  it('another tenant sees neither the lease nor any admin control', async () => {
    expect(leaseId).toMatch(/\S/);
    const other = await signIn(OTHER_TENANT_TOKEN);
    await other.getByRole('link', { name: 'Leases', exact: true }).click();
    await expect.poll(() => other.locator('#devices, #leases').count()).toBe(1);
    await other.waitForLoadState('networkidle');
    expect(await other.locator('#leases tbody').textContent()).not.toContain(leaseId!);
    expect(await other.locator('#leases tbody tr').count()).toBe(0);
    // What the page's own cookie may read: none of the other tenant's leases, and 404 for this one.
    const seen = (await other.evaluate(`(async () => [
      (await (await fetch('/v1/leases')).json()).leases.length,
      (await fetch('/v1/leases/${leaseId}')).status,
    ])()`)) as [number, number];
    expect(seen).toEqual([0, 404]);
    await other.getByRole('link', { name: 'Releases', exact: true }).click();
    await expect.poll(() => other.locator('#helpers tbody tr').count()).toBeGreaterThan(0);
    expect(await other.locator('#publish').count()).toBe(0);
    await other.getByRole('link', { name: 'Inspector', exact: true }).click();
    await other.waitForLoadState('networkidle');
    expect(await other.locator('#lease-select option').count()).toBe(0);
    expect(await axeViolations(other)).toEqual([]);
    await shot(other, 'inspector-other-tenant');
  }, 150_000);

  it('release from the UI: the teardown record joins the history of ended leases (its tenant and admins only)', async () => {
    expect(leaseId).toMatch(/\S/);
    const page = await signIn(CLIENT_TOKEN);
    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    await page.getByRole('button', { name: `Release ${leaseId}` }).click();
    await expect.poll(() => page.locator('#status').textContent()).toContain(`released ${leaseId}`);
    const row = page.locator(`#teardowns tbody tr[data-lease="${leaseId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    // What the teardown did, one item per action (the snapshot helper's session at least).
    expect(await row.locator('td').nth(6).locator('li').count()).toBeGreaterThan(0);
    expect(await row.locator('td').nth(7).textContent()).toBe('none');
    expect(await row.locator('td').nth(3).textContent()).toBe('released');
    expect(await page.locator('#teardowns tbody tr').first().getAttribute('data-lease')).toBe(leaseId);
    expect(await page.locator(`#leases tbody tr[data-lease="${leaseId}"]`).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'leases-history');

    const other = await signIn(OTHER_TENANT_TOKEN);
    await other.getByRole('link', { name: 'Leases', exact: true }).click();
    await other.waitForLoadState('networkidle');
    // (Admins see every tenant's history: test/integration/http-leases.test.ts.)
    expect(await other.locator(`#teardowns tbody tr[data-lease="${leaseId}"]`).count()).toBe(0);
  }, 90_000);
  it('waiting: a queued request shows under its selector with its place and a running clock, to its tenant and admins only, until it gets the device or gives up', async () => {
    const ci = new DeviceBridgeClient({ baseUrl: url, token: CLIENT_TOKEN });
    const globex = new DeviceBridgeClient({ baseUrl: url, token: OTHER_TENANT_TOKEN });
    const free = (await ci.listDevices()).devices.find((d) => !d.leased && d.state === 'online');
    expect(free).toBeDefined();
    const selector = { deviceId: free!.id };
    const held = await ci.acquireLease({ selector, ttlSeconds: 120 });
    const leasesOf = async (token: string) => {
      const page = await signIn(token);
      await page.getByRole('link', { name: 'Leases', exact: true }).click();
      await page.waitForURL(`${url}/console/leases`);
      return page;
    };
    const [client, admin, other] = await Promise.all([
      leasesOf(CLIENT_TOKEN),
      leasesOf(ADMIN_TOKEN),
      leasesOf(OTHER_TENANT_TOKEN),
    ]);
    const rows = (page: Page) => page.locator('#waiters tbody tr[data-waiter]');
    const LIVE = { timeout: 10_000, interval: 200 };
    // Nobody waits yet: the empty state.
    await expect
      .poll(() => client.locator('#waiters tbody.empty').textContent(), LIVE)
      .toBe('Nobody is waiting for a device.');
    expect(await rows(client).count()).toBe(0);

    // An admin holds every capability: its leases page opens the held lease's adb endpoint.
    expect(await admin.locator('#capabilities').textContent()).toBe('Your token may: shell, adb');
    await expect.poll(() => admin.locator(`#adb-lease option[value="${held.id}"]`).count(), LIVE).toBe(1);
    await admin.locator('#adb-lease').selectOption(held.id);
    await admin.getByLabel('Your adb public key').fill(fixturePublicKey);
    await admin.getByRole('button', { name: 'Open adb endpoint' }).click();
    await expect
      .poll(() => admin.locator('#adb-result').textContent(), LIVE)
      .toMatch(/^adb connect \S+:\d+$/);

    // A request of tenant acme waits for the leased device (not awaited: it is queued).
    const settle = <T>(p: Promise<T>) =>
      p.then(
        (value) => ({ value, error: null }),
        (error: unknown) => ({ value: null, error }),
      );
    const mine = settle(ci.acquireLease({ selector, waitSeconds: 60, ttlSeconds: 60 }));
    await expect.poll(() => rows(client).count(), LIVE).toBe(1);
    const [waiterId] = (await ci.listWaiters()).waiters.map((w) => w.waiterId);
    expect(await rows(client).getAttribute('data-waiter')).toBe(waiterId);
    expect(await rows(client).locator('td.position').textContent()).toBe('1');
    expect(await rows(client).locator('td.node').textContent()).toMatch(/\S/);
    expect(await client.locator('#waiters tr.group th').textContent()).toBe(`device ${free!.id} — 1 waiting`);
    // No tenant column for a client; the time waited counts up between refreshes.
    expect(await client.locator('#waiters thead th').allTextContents()).not.toContain('Tenant');
    expect(await rows(client).locator('td.tenant').count()).toBe(0);
    const seconds = async () =>
      Number.parseInt((await rows(client).locator('td.waiting').textContent()) ?? '', 10);
    const first = await seconds();
    await expect.poll(seconds, { timeout: 5_000, interval: 250 }).toBeGreaterThanOrEqual(first + 2);

    // A request of tenant globex joins the same queue behind it and gives up after a few seconds.
    const theirs = settle(globex.acquireLease({ selector, waitSeconds: 12 }));
    // Each client sees its own tenant's waiter only (globex's with its place: behind acme's).
    await expect.poll(() => rows(other).count(), LIVE).toBe(1);
    expect(await rows(other).locator('td.position').textContent()).toBe('2');
    expect(await rows(other).getAttribute('data-waiter')).not.toBe(waiterId);
    await expect.poll(() => rows(admin).count(), LIVE).toBe(2);
    expect(await rows(client).count()).toBe(1);
    expect(await rows(client).getAttribute('data-waiter')).toBe(waiterId);
    // Admins see both, in one group, in queue order, with the tenant.
    expect(await admin.locator('#waiters tbody[data-queue]').count()).toBe(1);
    expect(await admin.locator('#waiters tr.group th').textContent()).toBe(`device ${free!.id} — 2 waiting`);
    expect(await rows(admin).locator('td.position').allTextContents()).toEqual(['1', '2']);
    expect(await rows(admin).locator('td.tenant').allTextContents()).toEqual(['acme', 'globex']);
    expect(await admin.locator('#waiters thead th').allTextContents()).toContain('Tenant');
    await shot(client, 'leases-waiting-client');
    await shot(admin, 'leases-waiting-admin');
    expect(await axeViolations(admin)).toEqual([]);

    // globex's request gives up: its row goes, the empty state comes back on its page.
    const gaveUp = await theirs;
    expect(gaveUp.error).toBeInstanceOf(BridgeClientError);
    expect((gaveUp.error as BridgeClientError).code).toBe('CONFLICT');
    await expect.poll(() => rows(other).count(), LIVE).toBe(0);
    expect(await other.locator('#waiters tbody.empty').count()).toBe(1);
    await expect.poll(() => rows(admin).count(), LIVE).toBe(1);

    // The holder releases: acme's waiter gets the device and leaves the table.
    await ci.releaseLease(held.id);
    const granted = await mine;
    expect(granted.error).toBeNull();
    expect(granted.value!.deviceId).toBe(free!.id);
    await expect.poll(() => rows(client).count(), LIVE).toBe(0);
    expect(await client.locator('#waiters tbody.empty').count()).toBe(1);
    await ci.releaseLease(granted.value!.id);
  }, 90_000);

  describe('inspector', () => {
    const ci = () => new DeviceBridgeClient({ baseUrl: url, token: CLIENT_TOKEN });
    let lease: string;

    beforeAll(async () => {
      lease = (await ci().acquireLease({ ttlSeconds: 600 })).id;
    });
    afterAll(async () => {
      if (lease) await ci().releaseLease(lease);
    });

    const open = async (viewport = { width: 1400, height: 900 }): Promise<Page> => {
      const page = await signIn(CLIENT_TOKEN);
      await page.setViewportSize(viewport);
      await page.goto(`${url}/console/inspector?lease=${encodeURIComponent(lease)}`);
      await expect.poll(() => page.locator('#lease-select').inputValue()).toBe(lease);
      return page;
    };
    const snapshot = async (page: Page) => {
      const ready = await page.locator('#screen').getAttribute('data-ready');
      await page.getByRole('button', { name: 'Take snapshot' }).click();
      await expect
        .poll(() => page.locator('#screen').getAttribute('data-ready'), { timeout: 30_000 })
        .not.toBe(ready);
    };
    /** Visible images that show nothing (no or a broken source: the browser draws its broken icon). */
    const brokenImages = (page: Page) =>
      page.evaluate(
        `[...document.images].filter((i) => i.checkVisibility() && i.naturalWidth === 0).length`,
      ) as Promise<number>;

    it('before the first snapshot: a line saying there is none, no broken image', async () => {
      const page = await open();
      expect(await brokenImages(page)).toBe(0);
      expect(await page.locator('#screen-empty').isVisible()).toBe(true);
      expect(await page.locator('#screen-empty').textContent()).toContain('No snapshot yet');
      expect(await axeViolations(page)).toEqual([]);
      await snapshot(page);
      expect(await page.locator('#screenshot').isVisible()).toBe(true);
      expect(await page.evaluate(`document.getElementById('screenshot').naturalWidth`)).toBe(1080);
      expect(await page.locator('#screen-empty').isVisible()).toBe(false);
      expect(await brokenImages(page)).toBe(0);
    }, 90_000);

    it("every node box lies within the screenshot: boxes of nodes past the screen's edge are clipped or left out", async () => {
      const page = await open();
      await snapshot(page);
      // The simulated screen's chip row (a HorizontalScrollView) is wider than the screen.
      const outside = (await page.evaluate(`(() => {
        const img = document.getElementById('screenshot').getBoundingClientRect();
        const boxes = [...document.querySelectorAll('#boxes .box')];
        return [boxes.length, boxes.filter((b) => {
          const r = b.getBoundingClientRect();
          return r.left < img.left - 0.5 || r.top < img.top - 0.5 ||
            r.right > img.right + 0.5 || r.bottom > img.bottom + 0.5;
        }).map((b) => b.dataset.ref)];
      })()`)) as [number, string[]];
      expect(outside[0]).toBeGreaterThan(50);
      expect(outside[1]).toEqual([]);
    }, 90_000);

    it('the screenshot uses the width of a 1400×900 window (at least 470 px of it) and fits a 420 px one without horizontal scroll', async () => {
      const page = await open();
      await snapshot(page);
      const measure = () =>
        page.evaluate(`(() => {
          const r = document.getElementById('screenshot').getBoundingClientRect();
          return { left: r.left, right: r.right, width: r.width,
            scroll: document.documentElement.scrollWidth, inner: innerWidth };
        })()`) as Promise<{ left: number; right: number; width: number; scroll: number; inner: number }>;
      // 1080×2400 fitted to the window's height would be under 400 px wide: too small to read the
      // screen's text or hit a small node's box, so the screen keeps at least 480 px (and scrolls).
      const wide = await measure();
      expect(wide.width).toBeGreaterThanOrEqual(470);
      expect(wide.scroll).toBe(wide.inner);
      await shot(page, 'inspector-1400');
      await page.setViewportSize({ width: 420, height: 900 });
      const narrow = await measure();
      expect(narrow.scroll).toBeLessThanOrEqual(narrow.inner);
      expect(narrow.left).toBeGreaterThanOrEqual(0);
      expect(narrow.right).toBeLessThanOrEqual(narrow.inner);
      expect(narrow.width).toBeGreaterThan(300);
      await shot(page, 'inspector-420');
    }, 90_000);

    it('Type says what it typed once the screen is fresh', async () => {
      const page = await open();
      await snapshot(page);
      await page.getByLabel('Type into the focused field').fill('hi 👋');
      await page.getByRole('button', { name: 'Type', exact: true }).click();
      // After the fresh snapshot: what was typed (characters as people count them), then the screen.
      await expect
        .poll(() => page.locator('#status').textContent(), { timeout: 30_000 })
        .toMatch(/^typed 4 characters; snapshot: \d+ nodes/);
    }, 90_000);
  });
});
