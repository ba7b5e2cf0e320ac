/**
 * Pure pieces of the uiautomator XML scanner (`xml-scanner.ts`): character classes, attribute value
 * parsers that work in place on the document (no substring unless kept), and the scanner's error.
 */
import type { Bounds } from './types.ts';

/** Malformed XML at `offset` (UTF-16 index into the document); mapped to a BridgeError by the caller. */
export class XmlError extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

export function isNameEnd(c: number): boolean {
  // whitespace, '/', '>', '=' or end of input (NaN)
  return c === 32 || c === 10 || c === 13 || c === 9 || c === 47 || c === 62 || c === 61 || Number.isNaN(c);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * Whether XML 1.0 can carry the code point (its Char production): not the C0 controls other than
 * tab, LF and CR, not a surrogate, not U+FFFE or U+FFFF.
 */
export function isXml10Char(code: number): boolean {
  if (code < 0x20) return code === 9 || code === 10 || code === 13;
  if (code >= 0xd800 && code <= 0xdfff) return false;
  return code !== 0xfffe && code !== 0xffff && code <= 0x10ffff;
}

/**
 * Decode character references in `xml[start, end)` (known to contain '&'). A reference to a
 * character XML 1.0 cannot carry (`&#1;`, written by helpers before they dropped such characters) is
 * dropped, as the helpers and the simulator drop the character itself: one text on every path.
 */
export function decodeEntities(xml: string, start: number, end: number): string {
  const parts: string[] = [];
  let last = start;
  let amp = xml.indexOf('&', start);
  while (amp !== -1 && amp < end) {
    const semi = xml.indexOf(';', amp + 1);
    if (semi === -1 || semi >= end || semi - amp > 12) throw new XmlError(amp, "unterminated '&' reference");
    let decoded: string | undefined;
    if (xml.charCodeAt(amp + 1) === 35 /* # */) {
      const hex = xml.charCodeAt(amp + 2) === 120; /* x */
      const digits = xml.slice(amp + (hex ? 3 : 2), semi);
      const valid = hex ? /^[0-9a-fA-F]{1,6}$/.test(digits) : /^[0-9]{1,7}$/.test(digits);
      const code = valid ? Number.parseInt(digits, hex ? 16 : 10) : -1;
      if (code >= 0 && code <= 0x10ffff) decoded = isXml10Char(code) ? String.fromCodePoint(code) : '';
    } else {
      decoded = NAMED[xml.slice(amp + 1, semi)];
    }
    if (decoded === undefined) throw new XmlError(amp, `unknown reference ${xml.slice(amp, semi + 1)}`);
    if (amp > last) parts.push(xml.slice(last, amp));
    parts.push(decoded);
    last = semi + 1;
    amp = xml.indexOf('&', last);
  }
  if (last < end) parts.push(xml.slice(last, end));
  return parts.join('');
}

/** Parse `[l,t][r,b]` (integers, may be negative) in `xml[start, end)`; null when malformed. */
export function parseBounds(xml: string, start: number, end: number): Bounds | null {
  // The four numbers in locals (no scratch array: this runs once per node).
  let p = start;
  const l = boundsNumber(xml, p, 91 /* [ */);
  if (l === FAIL) return null;
  p = boundsEnd;
  const t = boundsNumber(xml, p, 44 /* , */);
  if (t === FAIL || xml.charCodeAt(boundsEnd) !== 93 /* ] */) return null;
  p = boundsEnd + 1;
  const r = boundsNumber(xml, p, 91 /* [ */);
  if (r === FAIL) return null;
  p = boundsEnd;
  const b = boundsNumber(xml, p, 44 /* , */);
  if (b === FAIL || xml.charCodeAt(boundsEnd) !== 93 /* ] */) return null;
  if (boundsEnd + 1 !== end) return null;
  const width = r > l ? r - l : 0;
  const height = b > t ? b - t : 0;
  // Small integers as such (`| 0` when it is exact): the fields then stay untagged small ints
  // instead of boxed doubles — 56 instead of ~120 bytes per bounds, one per node.
  return {
    x: (l | 0) === l ? l | 0 : l,
    y: (t | 0) === t ? t | 0 : t,
    width: (width | 0) === width ? width | 0 : width,
    height: (height | 0) === height ? height | 0 : height,
  };
}

/** `boundsNumber`'s refusal (not a number it can return: those are integers). */
const FAIL = 0.5;
/** Where the last `boundsNumber` stopped (the first character after its digits). */
let boundsEnd = 0;

/**
 * `open` then an optional `-` and 1–10 digits at `xml[p]`: the number (its end in `boundsEnd`), or
 * `FAIL`.
 */
function boundsNumber(xml: string, p: number, open: number): number {
  if (xml.charCodeAt(p) !== open) return FAIL;
  p++;
  let negative = false;
  if (xml.charCodeAt(p) === 45) {
    negative = true;
    p++;
  }
  const digitsStart = p;
  let n = 0;
  for (;;) {
    const d = xml.charCodeAt(p) - 48;
    if (d < 0 || d > 9) break;
    n = n * 10 + d;
    p++;
  }
  if (p === digitsStart || p - digitsStart > 10) return FAIL;
  boundsEnd = p;
  return negative ? -n : n;
}

/** A decimal integer (optional '-', at most 10 digits) filling `xml[start, end)`; null otherwise. */
export function parseIntIn(xml: string, start: number, end: number): number | null {
  let p = start;
  let negative = false;
  if (xml.charCodeAt(p) === 45) {
    negative = true;
    p++;
  }
  if (p === end || end - p > 10) return null;
  let n = 0;
  for (; p < end; p++) {
    const d = xml.charCodeAt(p) - 48;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

/** 1-based line and column of `offset` (lines end at '\n'). */
export function lineColumn(xml: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  let nl = xml.indexOf('\n');
  while (nl !== -1 && nl < offset) {
    line++;
    lineStart = nl + 1;
    nl = xml.indexOf('\n', lineStart);
  }
  return { line, column: offset - lineStart + 1 };
}
