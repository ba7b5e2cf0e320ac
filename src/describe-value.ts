/**
 * Render an untrusted value for an error message: quoted, every character outside printable ASCII
 * escaped (`\u200b`, `\u0000`, `\t`), and cut to a short length, so a message can name the offending
 * value without carrying invisible characters, terminal escapes or megabytes of input.
 */
const MAX_SHOWN = 48;

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'undefined':
      return 'undefined';
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

/** The JSON-ish type name of a value: `string`, `number`, `null`, `array`, `object`, ... */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function quote(s: string): string {
  const chars = Array.from(s);
  const cut = chars.length > MAX_SHOWN;
  let out = '';
  for (const ch of cut ? chars.slice(0, MAX_SHOWN) : chars) out += escapeChar(ch);
  return `"${out}"${cut ? `... (${chars.length} characters)` : ''}`;
}

function escapeChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (ch === '"') return '\\"';
  if (ch === '\\') return '\\\\';
  if (code >= 0x20 && code <= 0x7e) return ch;
  if (ch === '\t') return '\\t';
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

/** Replace control and non-ASCII characters of a whole message (e.g. a JSON parser's) for a terminal. */
export function sanitizeForTerminal(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    out += code >= 0x20 && code <= 0x7e ? ch : escapeChar(ch);
  }
  return out;
}
