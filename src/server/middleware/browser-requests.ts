/**
 * Requests that a browser makes on behalf of a page. Without tokens every loopback caller is an
 * admin, so a page of any origin the user visits could otherwise drive the bridge: a `no-cors` fetch
 * or a form post needs no permission to be sent, and a DNS-rebound name (the attacker's host name
 * answering 127.0.0.1) even reads the answers. So, without tokens:
 * - a `Host` that is not a loopback name or address (`localhost` and its subdomains, 127.0.0.0/8,
 *   `[::1]`, any port; or the host of DEVICEBRIDGE_PUBLIC_URL) is 421 MISDIRECTED_REQUEST;
 * - a request from a page of another origin is 403 CROSS_SITE_REQUEST: `Sec-Fetch-Site` other than
 *   `same-origin` or `none` (typed, bookmarked), else an `Origin` whose host is not the request's
 *   `Host`. A top-level page load (GET or HEAD, `Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest:
 *   document`: a link to the console) is let through: its answer goes to the user, never the page.
 * Requests without those headers (the CLI, the typed client, curl) are not a browser's and pass.
 * With tokens a bearer token is never sent by a browser on its own; the console's cookie session is
 * (its state-changing calls carry a CSRF token), and the one form without a session, the sign-in,
 * gets the same-origin check (login CSRF: a page signing the user in as someone else).
 */
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { isUnsafeMethod } from '../../auth/console-sessions.ts';
import { isLoopbackHost } from '../../config.ts';
import { describeValue } from '../../describe-value.ts';
import { BridgeError } from '../../errors.ts';
import type { AppEnv } from '../env.ts';

/** Whether a `Host` header names this machine's loopback: `localhost`, `*.localhost`, 127.0.0.0/8 or [::1], any port. */
export function isLoopbackHostHeader(host: string): boolean {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]/@\s]+))(?::\d{1,5})?$/.exec(host);
  if (m === null) return false;
  if (m[1] !== undefined) return isIP(m[1]) === 6 && isLoopbackHost(m[1]);
  return isLoopbackHost(m[2]!);
}

/** What a browser says about a request: its method, `Host`, `Origin` and `Sec-Fetch-*` headers. */
export interface BrowserSignals {
  method: string;
  host: string;
  origin?: string | undefined;
  fetchSite?: string | undefined;
  fetchMode?: string | undefined;
  fetchDest?: string | undefined;
}

/** Whether `origin` (a serialised origin, `http://127.0.0.1:7100`) names the same host and port as `host`. */
function sameHost(origin: string, host: string): boolean {
  try {
    const from = new URL(origin);
    return from.origin === origin && new URL(`${from.protocol}//${host}`).host === from.host;
  } catch {
    return false;
  }
}

/**
 * Why `request` is a request from a page of another origin (the header that says so), or null when it
 * is same-origin, typed by the user, a top-level page load, or not a browser's at all. `ownOrigins`
 * are origins the bridge is also reached under (its public URL).
 */
export function crossSiteReason(request: BrowserSignals, ownOrigins: readonly string[] = []): string | null {
  const site = request.fetchSite?.trim().toLowerCase();
  const method = request.method.toUpperCase();
  const pageLoad =
    (method === 'GET' || method === 'HEAD') &&
    request.fetchMode?.toLowerCase() === 'navigate' &&
    request.fetchDest?.toLowerCase() === 'document';
  if (site !== undefined) {
    if (site === 'same-origin' || site === 'none' || pageLoad) return null;
    return `Sec-Fetch-Site: ${describeValue(site)}`;
  }
  const origin = request.origin?.trim();
  if (origin === undefined) return null;
  if (sameHost(origin, request.host) || ownOrigins.includes(origin)) return null;
  return `Origin: ${describeValue(origin)}`;
}

function crossSite(reason: string, what: string): BridgeError {
  return new BridgeError(
    'CROSS_SITE_REQUEST',
    `${what} from a page of another origin (${reason}) is refused: ${
      what === 'a request'
        ? 'without tokens this bridge serves its own console and clients that send no Origin (the CLI, the typed client, curl)'
        : 'sign in on the console’s own page'
    }`,
  );
}

/** The browser checks above, before authentication (see the module's comment). */
export function browserRequests(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { auth, publicUrl } = c.get('services');
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    const ownOrigins = publicUrl === undefined ? [] : [new URL(publicUrl).origin];
    const signals = (): BrowserSignals => ({
      method: c.req.method,
      host,
      origin: c.req.header('origin'),
      fetchSite: c.req.header('sec-fetch-site'),
      fetchMode: c.req.header('sec-fetch-mode'),
      fetchDest: c.req.header('sec-fetch-dest'),
    });
    if (!auth.enabled) {
      const named = publicUrl !== undefined && new URL(publicUrl).host === host.toLowerCase();
      if (!isLoopbackHostHeader(host) && !named) {
        throw new BridgeError(
          'MISDIRECTED_REQUEST',
          `this bridge has no tokens and answers only to loopback names (localhost, 127.0.0.1, [::1]), not Host ${describeValue(host)}`,
        );
      }
      const reason = crossSiteReason(signals(), ownOrigins);
      if (reason !== null) throw crossSite(reason, 'a request');
    } else if (isUnsafeMethod(c.req.method) && c.req.path === '/console/sign-in') {
      const reason = crossSiteReason(signals(), ownOrigins);
      if (reason !== null) throw crossSite(reason, 'a sign-in');
    }
    await next();
  };
}
