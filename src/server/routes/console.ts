/**
 * The web console at /console: server-rendered pages (hono's `html` template, every interpolation
 * escaped) that the client script (src/console/client/) fills from the same /v1 API, with the same auth. With
 * tokens configured, signing in exchanges a bearer token for an HttpOnly SameSite=Strict session
 * cookie (src/auth/console-sessions.ts); without tokens the bridge serves loopback callers only, as
 * the API does.
 * Admin-only controls are rendered for admins only; every page names the token's capabilities, and
 * controls that need one are rendered only for a token that holds it (the API refuses the rest anyway).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import {
  type ConsoleSession,
  type ConsoleSessions,
  csrfMatches,
  SESSION_COOKIE,
  SESSION_IDLE_MS,
} from '../../auth/console-sessions.ts';
import {
  capabilitiesOf,
  hasCapability,
  hashToken,
  type Principal,
  sessionTokenRef,
} from '../../auth/tokens.ts';
import { consoleAssets } from '../../console/assets.ts';
import { BridgeError, isBridgeError } from '../../errors.ts';
import { readForm } from '../body.ts';
import type { AppEnv } from '../env.ts';
import { authenticateLimited } from '../middleware/auth.ts';

/** The most a sign-in or sign-out form may carry (a token and a CSRF token fit many times over). */
export const CONSOLE_FORM_MAX_BYTES = 4096;

type Page = 'devices' | 'leases' | 'releases' | 'inspector' | 'screen';
type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

const PAGES: Array<{ page: Page; title: string }> = [
  { page: 'devices', title: 'Devices' },
  { page: 'leases', title: 'Leases' },
  { page: 'inspector', title: 'Inspector' },
  { page: 'screen', title: 'Screen' },
  { page: 'releases', title: 'Releases' },
];

/** Pages are per caller and never cached; scripts only from this origin; never framed. */
const PAGE_HEADERS = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const isAdmin = (principal: Principal): boolean => principal.role === 'admin';

interface Viewer {
  principal: Principal;
  session: ConsoleSession | undefined;
}

async function layout(viewer: Viewer, page: Page, body: Markup): Promise<HtmlEscapedString> {
  const { script, style } = await consoleAssets();
  const title = PAGES.find((p) => p.page === page)?.title ?? 'Console';
  const { principal, session } = viewer;
  const capabilities = capabilitiesOf(principal);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${session?.csrf ?? ''}">
<title>${title} · Device Bridge console</title>
<link rel="stylesheet" href="/console/assets/console.css?v=${style.hash}">
<link rel="icon" type="image/svg+xml" href="/console/assets/favicon.svg">
</head>
<body data-page="${page}" data-role="${principal.role}" data-tenant="${principal.tenant}" data-capabilities="${capabilities.join(' ')}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<span class="brand">Device Bridge</span>
<nav aria-label="Console pages"><ul>
${PAGES.map(
  (p) =>
    html`<li><a href="/console/${p.page}"${p.page === page ? html` aria-current="page"` : ''}>${p.title}</a></li>`,
)}
</ul></nav>
<div class="who">
<span>Signed in as <strong>${principal.name}</strong> (tenant ${principal.tenant}, ${principal.role})</span>
<span id="capabilities">Your token may: ${capabilities.length === 0 ? 'nothing beyond its role' : capabilities.join(', ')}</span>
${
  session
    ? html`<form method="post" action="/console/sign-out"><input type="hidden" name="csrf" value="${session.csrf}"><button type="submit">Sign out</button></form>`
    : ''
}
</div>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
<div id="status" class="status" role="status" aria-live="polite"></div>
${body}
</main>
<script src="/console/assets/console.js?v=${script.hash}" defer></script>
</body>
</html>`;
}

const devicesPage = (admin: boolean) => html`
<form id="device-filters" class="filters" role="search" aria-label="Filter devices">
<label>Label <input name="label" placeholder="key=value" autocomplete="off"></label>
<label>State <select name="state">
<option value="">any</option><option>online</option><option>offline</option><option>unauthorized</option><option>quarantined</option>
</select></label>
</form>
<table id="devices" class="grid">
<caption>Devices this bridge knows, refreshed every 2 seconds</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Model</th><th scope="col">SDK</th><th scope="col">Labels</th><th scope="col">State</th><th scope="col">Owner node</th><th scope="col">Lease</th><th scope="col">Helpers</th>${admin ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
<tbody></tbody>
</table>
${
  admin
    ? html`<section class="admin" aria-labelledby="register-title">
<h2 id="register-title">Register a tunnel endpoint</h2>
<form id="register-device" novalidate>
<label for="register-endpoint">Endpoint (host:port)</label>
<input id="register-endpoint" name="endpoint" required aria-describedby="register-error" placeholder="127.0.0.1:5555">
<span id="register-error" class="field-error" role="alert"></span>
<button type="submit">Register</button>
</form>
</section>`
    : ''
}`;

/**
 * The leases page's remote adb section: the form that opens a lease's adb endpoint for the token that
 * may (the `adb` capability), else only what it would need.
 */
const adbSection = (principal: Principal) => html`<section aria-labelledby="adb-title">
<h2 id="adb-title">Remote adb</h2>
${
  hasCapability(principal, 'adb')
    ? html`<p id="adb-hint" class="hint">Your token holds the adb capability: the endpoint is a full shell on the device as the shell user, and installs through it take any flags; what you leave on the device is removed when the lease ends. Paste your adbkey.pub, then <code>adb connect</code> the host:port shown; the endpoint closes when the lease ends.</p>
<form id="adb-endpoint" class="row" novalidate>
<label>Lease <select id="adb-lease" name="lease" required></select></label>
<label>Your adb public key <textarea id="adb-key" name="publicKey" rows="2" cols="48" required placeholder="contents of ~/.android/adbkey.pub" aria-describedby="adb-hint adb-error"></textarea></label>
<button type="submit">Open adb endpoint</button>
<output id="adb-result" for="adb-lease adb-key"></output>
<span id="adb-error" class="field-error" role="alert"></span>
</form>`
    : html`<p id="adb-hint" class="hint">Opening a lease's adb endpoint needs the adb capability, which your token does not hold: the endpoint is a full shell on the device as the shell user, with any install flags. An operator grants it per token in the tokens file.</p>`
}
</section>`;

const leasesPage = (principal: Principal) => html`
<section aria-labelledby="acquire-title">
<h2 id="acquire-title">Acquire a lease</h2>
<form id="acquire" class="row" novalidate>
<label>Labels <input name="labels" placeholder="key=value, key=value" autocomplete="off"></label>
<label>Device id <input name="deviceId" autocomplete="off"></label>
<label>Min SDK <input name="sdkMin" inputmode="numeric" size="4"></label>
<label>TTL (s) <input name="ttlSeconds" inputmode="numeric" size="6" value="300"></label>
<button type="submit">Acquire</button>
<span id="acquire-error" class="field-error" role="alert"></span>
</form>
</section>
<table id="leases" class="grid">
<caption>Active leases you can see</caption>
<thead><tr><th scope="col">Lease</th><th scope="col">Device</th><th scope="col">Tenant</th><th scope="col">Fencing token</th><th scope="col">Expires in</th><th scope="col">Actions</th></tr></thead>
<tbody></tbody>
</table>
<section aria-labelledby="waiters-title">
<h2 id="waiters-title">Waiting</h2>
<table id="waiters" class="grid">
<caption>Lease requests queued for a device you can see, one group per selector, first in line first, refreshed every 2 seconds</caption>
<thead><tr><th scope="col">Position</th><th scope="col">Waiting for</th><th scope="col">Node</th>${isAdmin(principal) ? html`<th scope="col">Tenant</th>` : ''}<th scope="col">Waiter</th></tr></thead>
<tbody class="empty"><tr><td colspan="${isAdmin(principal) ? 5 : 4}">Nobody is waiting for a device.</td></tr></tbody>
</table>
</section>
${adbSection(principal)}
<section aria-labelledby="teardown-title">
<h2 id="teardown-title">Teardown of the last released lease</h2>
<pre id="teardown" class="record">none yet</pre>
</section>
<table id="teardowns" class="grid">
<caption>Ended leases you can see and what their teardown did, newest first (the last 20)</caption>
<thead><tr><th scope="col">Lease</th><th scope="col">Device</th><th scope="col">Tenant</th><th scope="col">Ended</th><th scope="col">Finished</th><th scope="col">Node</th><th scope="col">Actions done</th><th scope="col">Failures</th></tr></thead>
<tbody></tbody>
</table>`;

const releasesPage = (admin: boolean) => html`
<table id="helpers" class="grid">
<caption>Published helper versions, newest first (each row from the manifest the API serves)</caption>
<thead><tr><th scope="col">Helper</th><th scope="col">Version</th><th scope="col">Version code</th><th scope="col">sha256</th><th scope="col">Signer (signingCertSha256)</th><th scope="col">installArgs</th><th scope="col">Manifest</th></tr></thead>
<tbody></tbody>
</table>
<section aria-labelledby="manifest-title">
<h2 id="manifest-title">Manifest as served</h2>
<p><button type="button" id="copy-manifest" disabled>Copy manifest</button></p>
<pre id="manifest" class="record" tabindex="0" aria-label="manifest JSON">choose a helper above</pre>
</section>
${
  admin
    ? html`<section class="admin" aria-labelledby="publish-title">
<h2 id="publish-title">Publish a release (admin)</h2>
<form id="publish" novalidate>
<label>Helper name <input name="name" value="android-snapshot-helper" required></label>
<label>Version <input name="version" required placeholder="1.2.3"></label>
<label>APK or dex jar <input name="apk" type="file" required></label>
<button type="submit">Upload and publish</button>
<progress id="publish-progress" max="100" value="0" aria-label="upload progress"></progress>
<span id="publish-error" class="field-error" role="alert"></span>
</form>
</section>`
    : ''
}`;

/**
 * The live view of a lease's screen (src/console/client/live-screen.ts): a focusable canvas that
 * takes pointer and keys, its own status line, and fps / latency figures.
 */
const liveSection = () => html`<section class="live" aria-labelledby="live-title">
<h2 id="live-title">Live screen</h2>
<p class="row"><button type="button" id="live-toggle" aria-pressed="false" aria-controls="live-canvas">Start live view</button>
<span id="live-status" class="live-status" role="status" aria-live="polite">not started</span></p>
<p id="live-stats" class="hint">no frames yet</p>
<p id="live-help" class="hint">Click, drag or touch the picture to tap and swipe on the device. While the picture has focus, what you type goes to the device, Tab, Enter, Escape and the arrow keys too; Ctrl+] moves the focus off it.</p>
<canvas id="live-canvas" class="live-canvas" hidden tabindex="0" role="application" aria-roledescription="live device screen" aria-label="live screen of the leased device" aria-describedby="live-help live-stats"></canvas>
</section>`;

const screenPage = () => html`
<form id="screen-controls" class="row" novalidate>
<label>Lease <select id="lease-select" name="lease"></select></label>
</form>
${liveSection()}`;

const inspectorPage = () => html`
<form id="inspector-controls" class="row" novalidate>
<label>Lease <select id="lease-select" name="lease"></select></label>
<button type="submit" id="snap">Take snapshot</button>
<button type="button" id="download-xml">Download raw XML</button>
<label><input type="checkbox" id="tap-mode"> Tap where I click</label>
</form>
<div class="inspector">
<section class="screen-pane" aria-labelledby="screen-title">
<h2 id="screen-title">Screen</h2>
<p id="boxes-help" class="hint">Node boxes: Tab to them, arrow keys move between nodes, Enter selects.</p>
<div id="screen" class="screen"><p id="screen-empty" class="screen-empty">No snapshot yet: choose a lease and press Take snapshot.</p><img id="screenshot" alt="screenshot of the leased device" hidden><div id="boxes" class="boxes" role="group" aria-label="node boxes over the screenshot" aria-describedby="boxes-help"></div></div>
<form id="text-form" class="row" novalidate>
<label>Swipe from <input name="from" placeholder="x,y" size="9"></label>
<label>to <input name="to" placeholder="x,y" size="9"></label>
<button type="submit">Swipe</button>
</form>
<form id="type-form" class="row" novalidate>
<label>Type into the focused field <input name="text" autocomplete="off" size="24"></label>
<button type="submit">Type</button>
</form>
</section>
<section class="tree-pane" aria-labelledby="tree-title">
<h2 id="tree-title">Nodes</h2>
<label>Search <input id="tree-search" type="search" placeholder="text, id or class" autocomplete="off"></label>
<ul id="tree" class="tree" role="listbox" aria-label="snapshot nodes"></ul>
</section>
<section class="attrs-pane" aria-labelledby="attrs-title">
<h2 id="attrs-title">Selected node</h2>
<p><button type="button" id="tap-selected" disabled>Tap its centre</button></p>
<dl id="attrs"></dl>
</section>
</div>
${liveSection()}
<section class="doctor" aria-labelledby="doctor-title">
<h2 id="doctor-title">Doctor</h2>
<p id="doctor-hint" class="hint">Checks every capability of the leased device (helpers, snapshots, a gesture, the glass agent and a11y service) on its own self-test screen, then puts the device back as it found it. Takes up to two minutes.</p>
<p class="row"><button type="button" id="run-doctor" aria-describedby="doctor-hint">Run doctor</button>
<a id="doctor-download" hidden download>Download the report (JSON)</a></p>
<p id="doctor-summary" role="status"></p>
<table id="doctor-report" class="grid" hidden>
<caption>The doctor's checks, in the order they ran</caption>
<thead><tr><th scope="col">Check</th><th scope="col">Result</th><th scope="col">Time</th><th scope="col">Detail</th></tr></thead>
<tbody></tbody>
</table>
</section>`;

const signInPage = (error: string | null) => html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Device Bridge console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" type="image/svg+xml" href="/console/assets/favicon.svg"></head>
<body>
<main id="main" class="sign-in">
<h1>Device Bridge console</h1>
<form method="post" action="/console/sign-in">
<label for="token">Bearer token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required aria-describedby="token-error">
<span id="token-error" class="field-error" role="alert">${error ?? ''}</span>
<button type="submit">Sign in</button>
</form>
<p>The token is exchanged for a session cookie (HttpOnly, SameSite=Strict); the console never stores it.</p>
</main>
</body>
</html>`;

/** The caller of a console page, or null when it must sign in first. */
async function viewerOf(c: Context<AppEnv>, sessions: ConsoleSessions): Promise<Viewer | null> {
  const principal = c.get('principal');
  if (principal === null || principal === undefined) return null;
  return { principal, session: await sessions.get(getCookie(c, SESSION_COOKIE), c.get('services').auth) };
}

export function registerConsole(app: OpenAPIHono<AppEnv>, sessions: ConsoleSessions): void {
  app.get('/console', (c) => c.redirect('/console/devices', 302));

  app.get('/console/assets/:file', async (c) => {
    const { script, style, icon } = await consoleAssets();
    const file = c.req.param('file');
    const found =
      file === 'console.js'
        ? script
        : file === 'console.css'
          ? style
          : file === 'favicon.svg'
            ? icon
            : undefined;
    if (found === undefined) throw new BridgeError('NOT_FOUND', `no console asset ${file}`);
    const etag = `"${found.hash}"`;
    const versioned = c.req.query('v') === found.hash;
    const headers = {
      'Content-Type': found.type,
      ETag: etag,
      'Cache-Control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    };
    if (c.req.header('if-none-match') === etag) return c.body(null, 304, headers);
    return c.body(found.body, 200, headers);
  });

  app.get('/console/sign-in', (c) => c.html(signInPage(null), 200, PAGE_HEADERS));

  app.post('/console/sign-in', async (c) => {
    if (!c.get('services').auth.enabled) return c.redirect('/console/devices', 303);
    const form = await readForm(c, CONSOLE_FORM_MAX_BYTES);
    const token = (form['token'] ?? '').trim();
    let principal: Principal | null = null;
    try {
      // The API's limiter: by address and by credential (an empty token counts as a failure too).
      principal = authenticateLimited(c, `Bearer ${token}`);
    } catch (err) {
      if (!isBridgeError(err) || err.code !== 'UNAUTHENTICATED') throw err;
    }
    if (principal === null) return c.html(signInPage('That token is not valid.'), 401, PAGE_HEADERS);
    const session = await sessions.create(principal, sessionTokenRef(hashToken(token)));
    setCookie(c, SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: new URL(c.req.url).protocol === 'https:',
      maxAge: SESSION_IDLE_MS / 1000,
    });
    return c.redirect('/console/devices', 303);
  });

  app.post('/console/sign-out', async (c) => {
    const session = await sessions.get(getCookie(c, SESSION_COOKIE), c.get('services').auth);
    const form = await readForm(c, CONSOLE_FORM_MAX_BYTES);
    if (session !== undefined) {
      if (!csrfMatches(session, form['csrf'])) {
        throw new BridgeError('PERMISSION_DENIED', 'sign-out needs the page’s CSRF token');
      }
      await sessions.delete(session.id);
    }
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.redirect('/console/sign-in', 303);
  });

  const page = (name: Page, body: (principal: Principal) => Markup) =>
    app.get(`/console/${name}`, async (c) => {
      const viewer = await viewerOf(c, sessions);
      if (viewer === null) return c.redirect('/console/sign-in', 302);
      return c.html(await layout(viewer, name, body(viewer.principal)), 200, PAGE_HEADERS);
    });
  page('devices', (p) => devicesPage(isAdmin(p)));
  page('leases', leasesPage);
  page('releases', (p) => releasesPage(isAdmin(p)));
  page('inspector', inspectorPage);
  page('screen', screenPage);
}
