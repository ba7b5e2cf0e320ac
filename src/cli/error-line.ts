/**
 * How the CLI prints an error: the one `devicebridge: <message>` line on stderr and the one JSON
 * error object of `--json`, both redacted. Every command and the entry point (`main.ts`) use these.
 */

/**
 * The one JSON error object of the CLI (`--json`): `{"ok":false,"error":{code,message,retryable}}`,
 * the shape of the HTTP API's error body; the message is redacted like `errorLine`'s.
 */
export function jsonErrorLine(
  code: string,
  message: string,
  retryable: boolean,
  extra: Record<string, unknown> = {},
): string {
  const text = errorLine(message).slice('devicebridge: '.length);
  return JSON.stringify({ ok: false, error: { code, message: text, retryable, ...extra } });
}

/** An unexpected error as one line: its name and message, never its stack. */
export function describeUnexpected(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/**
 * The one line every CLI error path prints: `devicebridge: <message>`, with URL credentials
 * (`scheme://user:password@`) replaced and line breaks and control characters made inert, so no
 * message (a Node error quoting a URL, a multi-line cause) prints a secret or a stack.
 */
export function errorLine(message: string): string {
  const redacted = redactUrlCredentials(message).replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return `devicebridge: ${redacted.length > 2000 ? `${redacted.slice(0, 2000)}…` : redacted}`;
}

/** Replace the userinfo of anything URL-like (`scheme://userinfo@host`) with `***`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#\s]*@/g, '$1***@');
}
