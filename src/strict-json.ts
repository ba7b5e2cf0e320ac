/**
 * JSON for outside input. `JSON.parse` accepts duplicate keys (the last one silently wins), builds
 * objects with `__proto__` keys that later spreads and merges treat specially, and recurses without
 * bound on deeply nested input (a 10 KB document of `[` overflows the stack of any code that walks it).
 * This parser has `JSON.parse`'s grammar and result, and refuses, before building anything beyond the
 * offending point:
 *
 * - input longer than `maxBytes` UTF-8 bytes (checked before any scanning) and invalid UTF-8;
 * - nesting deeper than `maxDepth` containers;
 * - a key that appears twice in one object;
 * - the keys `__proto__`, `constructor` and `prototype`, at any depth;
 * - a number outside a double's range (`1e400`, which JSON.parse reads as Infinity).
 *
 * android/strict-json/ (StrictJson.java) is a port of this parser for the on-device helpers, with
 * the same rules and messages; test/fixtures/strict-json/cases.json holds the cases both run.
 *
 * Errors are `BridgeError('INVALID_ARGUMENT')` naming the rule, the line and column, and the JSON path
 * of the offending place. They never echo input values, so they are safe for secret files (tokens);
 * the names of offending keys are shown, escaped and cut short.
 */

import { describeValue } from './describe-value.ts';
import { BridgeError } from './errors.ts';

export interface JsonLimits {
  /** Most containers (objects and arrays) nested in one another; the top-level container is depth 1. */
  maxDepth?: number;
  /** Most UTF-8 bytes of the whole document. */
  maxBytes?: number;
}

export const DEFAULT_JSON_LIMITS = { maxDepth: 64, maxBytes: 1_048_576 } as const;

export type JsonRule = 'syntax' | 'duplicate-key' | 'prototype-key' | 'depth' | 'size' | 'encoding';

/** Keys refused in every object: they change what `obj[key] = v`, spreads and merges do. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function parseStrictJson(text: string | Uint8Array, limits: JsonLimits = {}): unknown {
  const maxDepth = limits.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth;
  const maxBytes = limits.maxBytes ?? DEFAULT_JSON_LIMITS.maxBytes;
  let source: string;
  if (typeof text === 'string') {
    // A string's UTF-8 length is at most 3 bytes per UTF-16 unit: skip the count when that fits.
    if (text.length * 3 > maxBytes && Buffer.byteLength(text, 'utf8') > maxBytes) {
      throw sizeError(Buffer.byteLength(text, 'utf8'), maxBytes);
    }
    source = text;
  } else {
    if (text.byteLength > maxBytes) throw sizeError(text.byteLength, maxBytes);
    try {
      source = utf8.decode(text);
    } catch {
      throw new BridgeError('INVALID_ARGUMENT', 'JSON: the document is not valid UTF-8', {
        details: { errors: [{ path: '$', message: 'not valid UTF-8' }], rule: 'encoding' },
      });
    }
  }
  return new Parser(source, maxDepth).document();
}

function sizeError(bytes: number, maxBytes: number): BridgeError {
  const message = `the document is ${bytes} bytes, over the limit of ${maxBytes} bytes`;
  return new BridgeError('INVALID_ARGUMENT', `JSON: ${message}`, {
    details: { errors: [{ path: '$', message }], rule: 'size', limit: maxBytes },
  });
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
// JSON's number grammar, anchored at the scan position (sticky).
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

type PathPart = string | number;

class Parser {
  readonly #src: string;
  readonly #maxDepth: number;
  #pos = 0;
  readonly #path: PathPart[] = [];

  constructor(src: string, maxDepth: number) {
    this.#src = src;
    this.#maxDepth = maxDepth;
  }

  document(): unknown {
    this.#skipSpace();
    const value = this.#value(0);
    this.#skipSpace();
    if (this.#pos < this.#src.length) throw this.#fail('syntax', 'unexpected content after the document');
    return value;
  }

  #value(depth: number): unknown {
    const src = this.#src;
    if (this.#pos >= src.length) throw this.#fail('syntax', 'unexpected end of input, expected a value');
    const ch = src.charCodeAt(this.#pos);
    switch (ch) {
      case 0x7b /* { */:
        return this.#object(depth + 1);
      case 0x5b /* [ */:
        return this.#array(depth + 1);
      case 0x22 /* " */:
        return this.#string();
      case 0x74 /* t */:
        return this.#literal('true', true);
      case 0x66 /* f */:
        return this.#literal('false', false);
      case 0x6e /* n */:
        return this.#literal('null', null);
      default:
        if (ch === 0x2d /* - */ || (ch >= 0x30 && ch <= 0x39)) return this.#number();
        throw this.#fail('syntax', 'unexpected character, expected a value');
    }
  }

  #object(depth: number): Record<string, unknown> {
    if (depth > this.#maxDepth) throw this.#depthError();
    this.#pos++; // {
    const out: Record<string, unknown> = {};
    this.#skipSpace();
    if (this.#src.charCodeAt(this.#pos) === 0x7d /* } */) {
      this.#pos++;
      return out;
    }
    for (;;) {
      if (this.#src.charCodeAt(this.#pos) !== 0x22) throw this.#fail('syntax', 'expected a string key');
      const keyAt = this.#pos;
      const key = this.#string();
      if (PROTOTYPE_KEYS.has(key)) {
        this.#pos = keyAt;
        throw this.#fail('prototype-key', `the key ${describeValue(key)} is not allowed`, key);
      }
      if (Object.hasOwn(out, key)) {
        this.#pos = keyAt;
        throw this.#fail('duplicate-key', `duplicate key ${describeValue(key)}`, key);
      }
      this.#skipSpace();
      if (this.#src.charCodeAt(this.#pos) !== 0x3a /* : */)
        throw this.#fail('syntax', "expected ':' after a key");
      this.#pos++;
      this.#skipSpace();
      this.#path.push(key);
      out[key] = this.#value(depth);
      this.#path.pop();
      if (this.#memberEnd(0x7d /* } */, 'an object')) return out;
    }
  }

  #array(depth: number): unknown[] {
    if (depth > this.#maxDepth) throw this.#depthError();
    this.#pos++; // [
    const out: unknown[] = [];
    this.#skipSpace();
    if (this.#src.charCodeAt(this.#pos) === 0x5d /* ] */) {
      this.#pos++;
      return out;
    }
    for (;;) {
      this.#path.push(out.length);
      out.push(this.#value(depth));
      this.#path.pop();
      if (this.#memberEnd(0x5d /* ] */, 'an array')) return out;
    }
  }

  /** After a member: `,` means another follows (false); the closing character ends the container (true). */
  #memberEnd(close: number, container: 'an object' | 'an array'): boolean {
    this.#skipSpace();
    const next = this.#src.charCodeAt(this.#pos);
    if (next === 0x2c /* , */) {
      this.#pos++;
      this.#skipSpace();
      return false;
    }
    if (next === close) {
      this.#pos++;
      return true;
    }
    if (Number.isNaN(next)) throw this.#fail('syntax', `unexpected end of input in ${container}`);
    throw this.#fail('syntax', `expected ',' or '${String.fromCharCode(close)}'`);
  }

  #string(): string {
    const src = this.#src;
    let i = this.#pos + 1; // after the opening quote
    let out = '';
    let runStart = i;
    for (;;) {
      if (i >= src.length) {
        this.#pos = i;
        throw this.#fail('syntax', 'unterminated string');
      }
      const c = src.charCodeAt(i);
      if (c === 0x22 /* " */) {
        out += src.slice(runStart, i);
        this.#pos = i + 1;
        return out;
      }
      if (c < 0x20) {
        this.#pos = i;
        throw this.#fail('syntax', 'control character in a string');
      }
      if (c !== 0x5c /* \ */) {
        i++;
        continue;
      }
      out += src.slice(runStart, i);
      const esc = src[i + 1];
      if (esc === 'u') {
        const hex = src.slice(i + 2, i + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) {
          this.#pos = i;
          throw this.#fail('syntax', 'invalid \\u escape in a string');
        }
        out += String.fromCharCode(Number.parseInt(hex, 16));
        i += 6;
      } else {
        const decoded = esc === undefined ? undefined : ESCAPES[esc];
        if (decoded === undefined) {
          this.#pos = i;
          throw this.#fail('syntax', 'invalid escape in a string');
        }
        out += decoded;
        i += 2;
      }
      runStart = i;
    }
  }

  #number(): number {
    NUMBER.lastIndex = this.#pos;
    const m = NUMBER.exec(this.#src);
    if (m === null) throw this.#fail('syntax', 'invalid number');
    const value = Number(m[0]);
    // 1e400 is Infinity to JSON.parse; no JSON reader on the other end (org.json) can hold it.
    if (!Number.isFinite(value)) throw this.#fail('syntax', 'number out of range');
    this.#pos += m[0].length;
    return value;
  }

  #literal<T>(word: string, value: T): T {
    if (!this.#src.startsWith(word, this.#pos))
      throw this.#fail('syntax', 'unexpected character, expected a value');
    this.#pos += word.length;
    return value;
  }

  #skipSpace(): void {
    const src = this.#src;
    let i = this.#pos;
    for (;;) {
      const c = src.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.#pos = i;
  }

  #depthError(): BridgeError {
    return this.#fail('depth', `nesting deeper than ${this.#maxDepth} levels`, undefined, this.#maxDepth);
  }

  #fail(rule: JsonRule, what: string, key?: string, limit?: number): BridgeError {
    const { line, column } = lineColumn(this.#src, this.#pos);
    const parts = key === undefined ? this.#path : [...this.#path, key];
    const path = renderPath(parts);
    return new BridgeError(
      'INVALID_ARGUMENT',
      `JSON: ${what} at line ${line}, column ${column} (path ${path})`,
      {
        details: {
          errors: [{ path, message: what }],
          rule,
          line,
          column,
          ...(limit === undefined ? {} : { limit }),
        },
      },
    );
  }
}

function lineColumn(src: string, pos: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(pos, src.length);
  for (let i = 0; i < end; i++) {
    if (src.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** `$.a.b[3]`, with keys that are not identifiers shown quoted and escaped: `$["x y"]`. */
export function renderPath(parts: readonly PathPart[]): string {
  let out = '$';
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (IDENTIFIER.test(part) && part.length <= 48) out += `.${part}`;
    else out += `[${describeValue(part)}]`;
  }
  return out;
}
