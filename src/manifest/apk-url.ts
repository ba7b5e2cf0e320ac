/**
 * The rule for a manifest's `apkUrl`: `https:`, or `http:` only when the host is loopback (127.x,
 * ::1, localhost), never credentials (`user:pass@`), only printable ASCII without spaces or
 * backslashes. Parsing uses the WHATWG URL parser and does no I/O.
 */
import { isLoopbackHost } from '../config.ts';

export const MAX_APK_URL_LENGTH = 2048;

const PRINTABLE_ASCII_NO_SPACE = /^[\u0021-\u007e]+$/;
/** `scheme://<authority containing @>`: credentials, even empty ones (`https://@host/`). */
const AUTHORITY_WITH_AT = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*@/;

/** Null when `url` is an acceptable `apkUrl`, otherwise the rule it breaks. */
export function apkUrlProblem(url: string): string | null {
  if (url.length === 0) return 'must not be empty (use null for a bundled artifact)';
  if (url.length > MAX_APK_URL_LENGTH) return `must be at most ${MAX_APK_URL_LENGTH} characters`;
  if (!PRINTABLE_ASCII_NO_SPACE.test(url)) {
    return 'must contain only printable ASCII characters (no spaces, control or non-ASCII characters)';
  }
  if (url.includes('\\')) return 'must not contain backslashes';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username !== '' || parsed.password !== '' || AUTHORITY_WITH_AT.test(url)) {
    return 'must not contain credentials (user:pass@)';
  }
  if (parsed.protocol === 'https:') return parsed.hostname === '' ? 'must name a host' : null;
  if (parsed.protocol === 'http:') {
    return isLoopbackHost(parsed.hostname)
      ? null
      : 'may use http: only on a loopback host (127.x, ::1, localhost); use https:';
  }
  return `must use https: (or http: on a loopback host), not ${parsed.protocol}`;
}

export function isAllowedApkUrl(url: unknown): url is string {
  return typeof url === 'string' && apkUrlProblem(url) === null;
}
