/**
 * The snapshot answer as bytes: exactly the UTF-8 bytes of `JSON.stringify(view)`, written straight
 * into a Buffer by a writer that knows the shape of the normalized tree (the fixed key order of
 * `SnapshotNode`, `WindowInfo` and `Bounds`, key bytes made once, small integers written as
 * digits). `JSON.stringify` + UTF-8 encoding cost about twice as much: V8 returns the stringified
 * answer as a cons string that the first byte count flattens, and then encodes it again.
 *
 * One path for every size: a small answer is one Buffer (the route sends it with its
 * Content-Length); an answer whose XML is at least `thresholdChars` long (STREAM_SNAPSHOT_CHARS unless
 * the options say otherwise) is a stream
 * of ~64 KiB pieces, each written when the response pulls it (bounded memory: one piece and the
 * node being written, never the whole answer). Pure (no I/O).
 *
 * Byte-identical to `JSON.stringify`: strings are escaped as it escapes them (`"`, `\`, control
 * characters as `\b \t \n \f \r` or `\u00xx`, lone surrogates as `\udxxx`, everything else raw
 * UTF-8), numbers are written as it writes them (integers as digits, other finite numbers through
 * `String`, `-0` as `0`, NaN and ±Infinity as `null`), keys whose value is undefined are left out.
 * Fields outside the tree (the answer's head) are written in their own key order by type.
 */
import type { Bounds, NormalizedSnapshot, SnapshotNode, WindowInfo } from './types.ts';

/**
 * A snapshot answer as the writer takes it: its fields, written in their own key order, with either
 * the raw XML (`format: xml`) or the normalized tree (`format: json`, whose XML decides streaming).
 * The contract's snapshot answer (src/api) is one.
 */
export type SnapshotAnswerView = Readonly<Record<string, unknown>> &
  ({ format: 'xml'; xml: string } | { format: 'json'; snapshot: NormalizedSnapshot });

/** Answers whose XML is at least this many characters are streamed (smaller ones: one Buffer). */
export const STREAM_SNAPSHOT_CHARS = 256 * 1024;

/** How an answer is written: the defaults in service; benches set them to measure. */
export interface SnapshotAnswerOptions {
  /** Answers whose XML is at least this many characters are streamed (default STREAM_SNAPSHOT_CHARS). */
  thresholdChars?: number;
  /**
   * Called as each piece is handed out, while the working buffer and the piece are both alive
   * (benches sample memory there: a timer cannot run inside the synchronous one-Buffer build).
   */
  probe?: (() => void) | null;
}
/** Bytes per streamed piece (a piece ends at the first node or string slice past this). */
const PIECE_BYTES = 64 * 1024;
/** Characters of a long string written between two checks for a full piece. */
const SLICE_CHARS = 16 * 1024;
/** The small answers' working buffer is kept for the next answer up to this size. */
const KEEP_SCRATCH_BYTES = 4 * 1024 * 1024;

/** The XML a view carries (its size decides streaming). */
function xmlOf(view: SnapshotAnswerView): string {
  return view.format === 'xml' ? view.xml : view.snapshot.raw;
}

/**
 * The answer's bytes: one Buffer for a small answer, a stream of pieces for one whose XML is at
 * least `thresholdChars` characters.
 */
export function snapshotAnswer(
  view: SnapshotAnswerView,
  options: SnapshotAnswerOptions = {},
): Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array<ArrayBuffer>> {
  const { thresholdChars = STREAM_SNAPSHOT_CHARS, probe = null } = options;
  const xml = xmlOf(view);
  if (typeof xml === 'string' && xml.length >= thresholdChars) {
    return piecesToStream(
      snapshotAnswerPieces(
        view,
        PIECE_BYTES,
        new JsonBytes(Buffer.allocUnsafeSlow(PIECE_BYTES + 4096), probe),
      ),
    );
  }
  return snapshotAnswerBytes(view, probe);
}

let scratch: Buffer | null = null;

/** The whole answer as one Buffer (exactly sized). */
export function snapshotAnswerBytes(
  view: SnapshotAnswerView,
  probe: (() => void) | null = null,
): Buffer<ArrayBuffer> {
  const out = new JsonBytes(scratch ?? Buffer.allocUnsafeSlow(256 * 1024), probe);
  scratch = null; // not shared while in use (the writer is synchronous, but stay safe)
  const pieces = snapshotAnswerPieces(view, Number.POSITIVE_INFINITY, out);
  const piece = pieces.next();
  if (piece.done === true || pieces.next().done !== true) throw new Error('one piece expected');
  if (out.buffer.length <= KEEP_SCRATCH_BYTES) scratch = out.buffer;
  return piece.value;
}

/**
 * The answer in pieces of at least `pieceBytes` (the last may be shorter), each a Buffer of its
 * own: with `pieceBytes` = Infinity, one piece.
 */
export function* snapshotAnswerPieces(
  view: SnapshotAnswerView,
  pieceBytes: number,
  out = new JsonBytes(
    Buffer.allocUnsafeSlow(pieceBytes === Number.POSITIVE_INFINITY ? 256 * 1024 : pieceBytes + 4096),
  ),
): Generator<Buffer<ArrayBuffer>, void, undefined> {
  const fields: Readonly<Record<string, unknown>> = view;
  out.byte(123 /* { */);
  let first = true;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    if (!first) out.byte(44 /* , */);
    first = false;
    out.string(key);
    out.byte(58 /* : */);
    if (key === 'xml' && view.format === 'xml' && typeof value === 'string') {
      yield* longString(out, value, pieceBytes);
    } else if (key === 'snapshot' && view.format === 'json') {
      yield* snapshotJson(out, value as NormalizedSnapshot, pieceBytes);
    } else {
      out.value(value);
    }
  }
  out.byte(125 /* } */);
  yield out.take();
}

/** A string literal in slices, the piece handed out when full between two slices. */
function* longString(
  out: JsonBytes,
  text: string,
  pieceBytes: number,
): Generator<Buffer<ArrayBuffer>, void, undefined> {
  out.byte(34);
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    // Never split a surrogate pair between two slices (a lone high surrogate ends its slice).
    const c = text.charCodeAt(end - 1);
    if (end < text.length && c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(end);
      if (d >= 0xdc00 && d <= 0xdfff) end++;
    }
    out.stringPart(text, start, end);
    start = end;
    if (out.length >= pieceBytes) yield out.take();
  }
  out.byte(34);
}

function* snapshotJson(
  out: JsonBytes,
  snapshot: NormalizedSnapshot,
  pieceBytes: number,
): Generator<Buffer<ArrayBuffer>, void, undefined> {
  const fields = snapshot as unknown as Record<string, unknown>;
  if (fields === null || typeof fields !== 'object' || typeof fields['toJSON'] === 'function') {
    out.value(snapshot);
    return;
  }
  out.byte(123);
  let first = true;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    if (!first) out.byte(44);
    first = false;
    out.string(key);
    out.byte(58);
    if (key === 'windows' && Array.isArray(value)) yield* nodeList(out, value as SnapshotNode[], pieceBytes);
    else out.value(value);
  }
  out.byte(125);
}

/** `JSON.stringify(nodes)` of a node list, node by node (an explicit stack: any depth). */
function* nodeList(
  out: JsonBytes,
  roots: SnapshotNode[],
  pieceBytes: number,
): Generator<Buffer<ArrayBuffer>, void, undefined> {
  const lists: SnapshotNode[][] = [roots];
  const next: number[] = [0];
  out.byte(91 /* [ */);
  for (;;) {
    const top = lists.length - 1;
    const nodes = lists[top] as SnapshotNode[];
    const i = next[top] as number;
    if (i === nodes.length) {
      lists.pop();
      next.pop();
      if (lists.length === 0) break;
      // Close the children list and the node it belongs to.
      out.byte(93);
      out.byte(125);
      continue;
    }
    next[top] = i + 1;
    if (i > 0) out.byte(44);
    const node = nodes[i] as SnapshotNode;
    out.nodeHead(node);
    const children = node.children;
    if (children.length > 0) {
      lists.push(children);
      next.push(0);
    } else {
      out.byte(93);
      out.byte(125);
    }
    if (out.length >= pieceBytes) yield out.take();
  }
  out.byte(93 /* ] */);
}

/** Fragments of key bytes, made once. */
const ascii = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0));
const TRUE = ascii('true');
const FALSE = ascii('false');
const NULL = ascii('null');

/**
 * Unchecked writes (`#put`) stay within this many bytes after a checked one: the longest run of
 * them (a node's flags, its window's keys) is about 600 bytes.
 */
const SLACK = 1024;

/** A key with each of its values (index 0: false, 1: true, 2: null), made once. */
const flag = (key: string): Uint8Array[] => [
  ascii(`,"${key}":false`),
  ascii(`,"${key}":true`),
  ascii(`,"${key}":null`),
];

/**
 * Every key of a node, in the order the tree builder makes them (a new field fails to compile here);
 * a boolean's key comes with each of its values.
 */
const NODE_KEYS = {
  ref: ascii('{"ref":'),
  type: ascii(',"type":'),
  className: ascii(',"className":'),
  text: ascii(',"text":'),
  contentDesc: ascii(',"contentDesc":'),
  resourceId: ascii(',"resourceId":'),
  package: ascii(',"package":'),
  hint: ascii(',"hint":'),
  index: ascii(',"index":'),
  bounds: ascii(',"bounds":'),
  visible: flag('visible'),
  enabled: flag('enabled'),
  clickable: flag('clickable'),
  longClickable: flag('longClickable'),
  focusable: flag('focusable'),
  focused: flag('focused'),
  scrollable: flag('scrollable'),
  checkable: flag('checkable'),
  checked: flag('checked'),
  selected: flag('selected'),
  password: flag('password'),
  canScrollForward: flag('canScrollForward'),
  canScrollBackward: flag('canScrollBackward'),
  covered: flag('covered'),
  hittable: flag('hittable'),
  window: ascii(',"window":'),
  children: ascii(',"children":['),
} satisfies { [K in keyof Required<SnapshotNode>]: Uint8Array | Uint8Array[] };

const WINDOW_KEYS = {
  index: ascii('{"index":'),
  rotation: ascii(',"rotation":'),
  package: ascii(',"package":'),
  displayId: ascii(',"displayId":'),
  type: ascii(',"type":'),
  layer: ascii(',"layer":'),
  active: ascii(',"active":'),
  focused: ascii(',"focused":'),
  bounds: ascii(',"bounds":'),
} satisfies { [K in keyof Required<WindowInfo>]: Uint8Array };

const BOUNDS_KEYS = {
  x: ascii('{"x":'),
  y: ascii(',"y":'),
  width: ascii(',"width":'),
  height: ascii(',"height":'),
} satisfies { [K in keyof Required<Bounds>]: Uint8Array };

const HEX = ascii('0123456789abcdef');
/** The escape of each character below 0x20 and of `"` and `\` (0: written as is). */
const ESCAPE = new Uint8Array(128);
for (let c = 0; c < 0x20; c++) ESCAPE[c] = 117; /* u */
ESCAPE[8] = 98; /* b */
ESCAPE[9] = 116; /* t */
ESCAPE[10] = 110; /* n */
ESCAPE[12] = 102; /* f */
ESCAPE[13] = 114; /* r */
ESCAPE[34] = 34;
ESCAPE[92] = 92;

/**
 * A growing byte buffer of JSON. Writes check for room first (a string needs at most 6 bytes per
 * UTF-16 unit); `take()` hands out what was written as a Buffer of its own and starts again.
 */
export class JsonBytes {
  #buf: Buffer;
  #pos = 0;
  readonly #probe: (() => void) | null;

  /** `probe`: called as each piece is taken (SnapshotAnswerOptions.probe). */
  constructor(buffer: Buffer, probe: (() => void) | null = null) {
    this.#buf = buffer;
    this.#probe = probe;
  }

  /** Bytes written and not taken. */
  get length(): number {
    return this.#pos;
  }

  /** The working buffer (it may have grown). */
  get buffer(): Buffer {
    return this.#buf;
  }

  /** What was written, copied into a Buffer of its own; the writer starts empty. */
  take(): Buffer<ArrayBuffer> {
    const piece = Buffer.allocUnsafeSlow(this.#pos);
    this.#buf.copy(piece, 0, 0, this.#pos);
    this.#pos = 0;
    this.#probe?.();
    return piece;
  }

  /** Room for `bytes` more, and SLACK beyond them (for the unchecked `#put`s that follow). */
  #room(bytes: number): void {
    if (this.#pos + bytes + SLACK > this.#buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.#buf.length * 2, this.#pos + bytes + SLACK));
      this.#buf.copy(grown, 0, 0, this.#pos);
      this.#buf = grown;
    }
  }

  byte(b: number): void {
    this.#room(1);
    this.#buf[this.#pos++] = b;
  }

  #bytes(fragment: Uint8Array): void {
    this.#room(fragment.length);
    this.#put(fragment);
  }

  /** `fragment` without a check: fewer than SLACK bytes since the last checked write. */
  #put(fragment: Uint8Array): void {
    const n = fragment.length;
    const buf = this.#buf;
    let p = this.#pos;
    for (let i = 0; i < n; i++) buf[p++] = fragment[i] as number;
    this.#pos = p;
  }

  #bool(b: boolean): void {
    this.#bytes(b ? TRUE : FALSE);
  }

  /** A number as `JSON.stringify` writes it. */
  number(n: number): void {
    if ((n | 0) === n) {
      this.#int(n | 0);
    } else if (Number.isFinite(n)) {
      this.#ascii(String(n));
    } else {
      this.#bytes(NULL);
    }
  }

  /** A 32-bit integer as decimal digits. */
  #int(n: number): void {
    this.#room(11);
    const buf = this.#buf;
    let p = this.#pos;
    let v = n;
    if (v < 0) {
      buf[p++] = 45;
      v = -v; // -2^31 → 2^31: still exact as a double
    }
    if (v < 10) {
      buf[p++] = 48 + v;
      this.#pos = p;
      return;
    }
    let digits = 2;
    for (let t = 100; t <= v && digits < 10; t *= 10) digits++;
    p += digits;
    this.#pos = p;
    while (digits-- > 0) {
      const q = Math.floor(v / 10);
      buf[--p] = 48 + (v - q * 10);
      v = q;
    }
  }

  /** A string known to be printable ASCII without `"` or `\` (number texts). */
  #ascii(text: string): void {
    const n = text.length;
    this.#room(n);
    const buf = this.#buf;
    let p = this.#pos;
    for (let i = 0; i < n; i++) buf[p++] = text.charCodeAt(i);
    this.#pos = p;
  }

  /** A JSON string literal. */
  string(text: string): void {
    const n = text.length;
    this.#room(n + 2);
    const buf = this.#buf;
    const start = this.#pos;
    let p = start;
    buf[p++] = 34;
    // Printable ASCII without `"` and `\`: byte for byte; anything else: the general path.
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80 || ESCAPE[c] !== 0) {
        this.#pos = p;
        this.stringPart(text, i, n);
        this.byte(34);
        return;
      }
      buf[p++] = c;
    }
    buf[p++] = 34;
    this.#pos = p;
  }

  /** The escaped UTF-8 of `text[start, end)` (no quotes), as `JSON.stringify` escapes it. */
  stringPart(text: string, start: number, end: number): void {
    this.#room((end - start) * 6);
    const buf = this.#buf;
    let p = this.#pos;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80) {
        const e = ESCAPE[c] as number;
        if (e === 0) {
          buf[p++] = c;
        } else {
          buf[p++] = 92;
          buf[p++] = e;
          if (e === 117) {
            buf[p++] = 48;
            buf[p++] = 48;
            buf[p++] = HEX[c >> 4] as number;
            buf[p++] = HEX[c & 15] as number;
          }
        }
      } else if (c < 0x800) {
        buf[p++] = 0xc0 | (c >> 6);
        buf[p++] = 0x80 | (c & 63);
      } else if (c < 0xd800 || c > 0xdfff) {
        buf[p++] = 0xe0 | (c >> 12);
        buf[p++] = 0x80 | ((c >> 6) & 63);
        buf[p++] = 0x80 | (c & 63);
      } else {
        const d = i + 1 < end ? text.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          buf[p++] = 0xf0 | (cp >> 18);
          buf[p++] = 0x80 | ((cp >> 12) & 63);
          buf[p++] = 0x80 | ((cp >> 6) & 63);
          buf[p++] = 0x80 | (cp & 63);
          i++;
        } else {
          // A lone surrogate: escaped, as well-formed JSON.stringify does.
          buf[p++] = 92;
          buf[p++] = 117;
          buf[p++] = 100; /* d */
          buf[p++] = HEX[(c >> 8) & 15] as number;
          buf[p++] = HEX[(c >> 4) & 15] as number;
          buf[p++] = HEX[c & 15] as number;
        }
      }
    }
    this.#pos = p;
  }

  /** Any JSON value outside the tree (the answer's head): by type, objects through JSON.stringify. */
  value(value: unknown): void {
    if (typeof value === 'string') this.string(value);
    else if (typeof value === 'number') this.number(value);
    else if (typeof value === 'boolean') this.#bool(value);
    else if (value === null) this.#bytes(NULL);
    else this.#json(JSON.stringify(value) ?? 'null');
  }

  /** Text that is already JSON (well-formed: no lone surrogates), as UTF-8. */
  #json(text: string): void {
    this.#room(text.length * 3);
    this.#pos += this.#buf.write(text, this.#pos, 'utf8');
  }

  #bounds(b: Bounds | null): void {
    if (b === null) {
      this.#bytes(NULL);
      return;
    }
    this.#bytes(BOUNDS_KEYS.x);
    this.number(b.x);
    this.#bytes(BOUNDS_KEYS.y);
    this.number(b.y);
    this.#bytes(BOUNDS_KEYS.width);
    this.number(b.width);
    this.#bytes(BOUNDS_KEYS.height);
    this.number(b.height);
    this.byte(125);
  }

  #window(w: WindowInfo | null): void {
    if (w === null) {
      this.#bytes(NULL);
      return;
    }
    this.#bytes(WINDOW_KEYS.index);
    this.number(w.index);
    this.#bytes(WINDOW_KEYS.rotation);
    if (w.rotation === null) this.#bytes(NULL);
    else this.number(w.rotation);
    this.#bytes(WINDOW_KEYS.package);
    this.string(w.package);
    if (w.displayId !== undefined) {
      this.#bytes(WINDOW_KEYS.displayId);
      this.number(w.displayId);
    }
    if (w.type !== undefined) {
      this.#bytes(WINDOW_KEYS.type);
      this.number(w.type);
    }
    if (w.layer !== undefined) {
      this.#bytes(WINDOW_KEYS.layer);
      this.number(w.layer);
    }
    if (w.active !== undefined) {
      this.#bytes(WINDOW_KEYS.active);
      this.#bool(w.active);
    }
    if (w.focused !== undefined) {
      this.#bytes(WINDOW_KEYS.focused);
      this.#bool(w.focused);
    }
    if (w.bounds !== undefined) {
      this.#bytes(WINDOW_KEYS.bounds);
      this.#bounds(w.bounds);
    }
    this.byte(125);
  }

  /** A node up to and including `"children":[` (its children and `]}` follow). */
  nodeHead(node: SnapshotNode): void {
    const k = NODE_KEYS;
    this.#room(0);
    this.#put(k.ref);
    this.string(node.ref);
    this.#put(k.type);
    this.string(node.type);
    this.#put(k.className);
    this.string(node.className);
    this.#put(k.text);
    this.string(node.text);
    this.#put(k.contentDesc);
    this.string(node.contentDesc);
    this.#put(k.resourceId);
    this.string(node.resourceId);
    this.#put(k.package);
    this.string(node.package);
    this.#put(k.hint);
    this.string(node.hint);
    this.#put(k.index);
    this.number(node.index);
    this.#put(k.bounds);
    this.#bounds(node.bounds);
    this.#put(k.visible[node.visible ? 1 : 0] as Uint8Array);
    this.#put(k.enabled[node.enabled ? 1 : 0] as Uint8Array);
    this.#put(k.clickable[node.clickable ? 1 : 0] as Uint8Array);
    this.#put(k.longClickable[node.longClickable ? 1 : 0] as Uint8Array);
    this.#put(k.focusable[node.focusable ? 1 : 0] as Uint8Array);
    this.#put(k.focused[node.focused ? 1 : 0] as Uint8Array);
    this.#put(k.scrollable[node.scrollable ? 1 : 0] as Uint8Array);
    this.#put(k.checkable[node.checkable ? 1 : 0] as Uint8Array);
    this.#put(k.checked[node.checked ? 1 : 0] as Uint8Array);
    this.#put(k.selected[node.selected ? 1 : 0] as Uint8Array);
    this.#put(k.password[node.password ? 1 : 0] as Uint8Array);
    const canScrollForward = node.canScrollForward;
    this.#put(k.canScrollForward[canScrollForward === null ? 2 : canScrollForward ? 1 : 0] as Uint8Array);
    const canScrollBackward = node.canScrollBackward;
    this.#put(k.canScrollBackward[canScrollBackward === null ? 2 : canScrollBackward ? 1 : 0] as Uint8Array);
    this.#put(k.covered[node.covered ? 1 : 0] as Uint8Array);
    this.#put(k.hittable[node.hittable ? 1 : 0] as Uint8Array);
    this.#put(k.window);
    this.#window(node.window);
    this.#put(k.children);
  }
}

/** Pieces → a byte stream, each piece made when the consumer pulls. */
export function piecesToStream(
  pieces: Iterator<Uint8Array<ArrayBuffer>, void, undefined>,
): ReadableStream<Uint8Array<ArrayBuffer>> {
  return new ReadableStream<Uint8Array<ArrayBuffer>>(
    {
      pull(controller) {
        const next = pieces.next();
        if (next.done === true) controller.close();
        else controller.enqueue(next.value);
      },
      cancel() {
        pieces.return?.(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}
