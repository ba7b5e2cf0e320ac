/**
 * Streaming decode of a one-shot snapshot run's `am instrument -w` output: bytes are pushed as they
 * arrive from the device and each chunk record's `payloadBase64` is base64-decoded straight from
 * those bytes into one growing buffer; its text is never built (the output's status records are
 * ~1.5× the XML and were the largest part of the path's memory). Everything else (the other lines)
 * goes through the one `InstrumentationOutputParser`, and the answer is exactly the one
 * `interpretSnapshotResult(parseInstrumentationOutput(text))` gives for the whole text — same XML,
 * same errors in the same order of precedence (property-tested for every split of the input).
 *
 * How: a payload line that is clean base64 (length a multiple of 4, alphabet incl. the URL-safe
 * `-`/`_` Node accepts, 0–2 trailing `=`) is decoded at the buffer's end (tentatively) and the
 * parser gets a short token line instead (`payloadBase64=<token>`) so the record rules (field order,
 * repeated keys, continuation lines) stay the parser's; when the record closes its fields go to
 * `SnapshotChunkAssembler`, which commits the tentative bytes when the token is still its payload.
 * Anything else (dirty base64, a continued payload line, lines after `INSTRUMENTATION_CODE`) takes
 * the text path with the text parser's exact semantics. Pure, no I/O.
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import {
  type Failure,
  type Fields,
  hasHierarchy,
  parseIntegerField,
  protocolError,
  SNAPSHOT_HELPER_PROTOCOL,
  SNAPSHOT_OUTPUT_FORMAT,
} from './helper-fields.ts';
import { InstrumentationOutputParser, type InstrumentationStatus } from './instrumentation-output.ts';
import { decodeUtf8 } from './utf8.ts';

export type ChunkAssembly = { ok: true; xml: string; byteLength: number; chunkCount: number } | Failure;

/** Exact decoded size of padded base64 text, or -1 when its length is not a multiple of 4. */
export function decodedLength(b64: string): number {
  const length = b64.length;
  if (length % 4 !== 0) return -1;
  if (length === 0) return 0;
  let padding = 0;
  if (b64.charCodeAt(length - 1) === 61) padding = b64.charCodeAt(length - 2) === 61 ? 2 : 1;
  return (length / 4) * 3 - padding;
}

/** base64 alphabet (standard and URL-safe, as Node's decoder) → 6-bit value; -1 otherwise. */
const SEXTET = new Int8Array(256).fill(-1);
for (let i = 0; i < 64; i++) {
  SEXTET['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
}
SEXTET[45] = 62; // '-'
SEXTET[95] = 63; // '_'

/**
 * Decode clean padded base64 `src[start, end)` into `out` at `offset`; the number of bytes written,
 * or -1 when the text is not clean (empty, length not a multiple of 4, a character outside the
 * alphabet, `=` anywhere but the last one or two places) — `out` may then hold partial output.
 * For clean text the bytes are exactly what `Buffer.write(text, 'base64')` gives.
 */
export function decodeCleanBase64(
  src: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  offset: number,
): number {
  const length = end - start;
  if (length === 0 || length % 4 !== 0) return -1;
  let padding = 0;
  if (src[end - 1] === 61) padding = src[end - 2] === 61 ? 2 : 1;
  const full = end - (padding === 0 ? 0 : 4);
  let o = offset;
  let i = start;
  for (; i < full; i += 4) {
    const a = SEXTET[src[i] as number] as number;
    const b = SEXTET[src[i + 1] as number] as number;
    const c = SEXTET[src[i + 2] as number] as number;
    const d = SEXTET[src[i + 3] as number] as number;
    if ((a | b | c | d) < 0) return -1;
    out[o] = (a << 2) | (b >> 4);
    out[o + 1] = ((b & 15) << 4) | (c >> 2);
    out[o + 2] = ((c & 3) << 6) | d;
    o += 3;
  }
  if (padding !== 0) {
    const a = SEXTET[src[i] as number] as number;
    const b = SEXTET[src[i + 1] as number] as number;
    if ((a | b) < 0) return -1;
    out[o++] = (a << 2) | (b >> 4);
    if (padding === 1) {
      const c = SEXTET[src[i + 2] as number] as number;
      if (c < 0) return -1;
      out[o++] = ((b & 15) << 4) | (c >> 2);
    }
  }
  return o - offset;
}

/** Tentatively decoded payload bytes: `[start, start + length)` of the assembler's buffer. */
interface Tentative {
  token: string;
  start: number;
  length: number;
  /** The line's base64 text bytes, kept only to rebuild the text if a continuation line follows. */
  source: Uint8Array;
}

/** Largest up-front reservation from a chunk record's `chunkCount` (beyond it the buffer doubles). */
const MAX_RESERVE = 64 * 1024 * 1024;
/**
 * A reservation from `chunkCount` is made only once it is at most this many times the snapshot bytes
 * decoded and committed so far, checked at every growth: a device-reported `chunkCount` never costs
 * more memory than 16× the valid chunk data that came before it (noise, refused payloads and other
 * output count for nothing). It is made whole, not in steps: a reservation that is outgrown is
 * copied, and each copy is garbage of the buffer's size. Until it is allowed the bytes fill segments
 * (64 KiB, then as large as all before them), copied once into the reservation or, without one, at
 * the end: a doubling buffer copied at each step cost twice as much before the reservation (0.1× the
 * XML of a 2 MB snapshot instead of 0.067×).
 */
const RESERVE_AHEAD = 16;
const MIN_RESERVE = 64 * 1024;

/**
 * `assembleSnapshotChunks` fed one record at a time: the same checks, the same error for the same
 * records, but in-order chunks are decoded straight into one buffer as they arrive (out-of-order
 * ones wait as pieces until their turn) and no record or payload text is kept.
 */
export class SnapshotChunkAssembler {
  /** The segment being filled: committed bytes `[0, #length)`, then room (tentative bytes). */
  #out: Buffer = Buffer.allocUnsafe(0);
  #length = 0;
  /** Full segments before `#out` (none once the reservation is made), and their bytes. */
  #segments: Buffer[] = [];
  #before = 0;
  #next = 0;
  #pending = new Map<number, Uint8Array>();
  #record = 0;
  #chunkCount = -1;
  #received = 0;
  #indices: number[] = [];
  #structural: Failure | null = null;
  #slotError: Failure | null = null;
  #contentError = -1;
  #tentative: Tentative | null = null;
  readonly #lane: Tentative = { token: '', start: 0, length: 0, source: new Uint8Array(0) };
  /** `chunkCount` × the first chunk's decoded length once it is known, else -1. */
  #estimate = -1;

  /** Room for `n` more bytes after the committed ones (the tentative bytes there are dropped). */
  #ensure(n: number): void {
    const need = this.#length + n;
    if (need <= this.#out.length) return;
    this.#grow(need);
  }

  /**
   * Room for at least `need` bytes in `#out` (its committed bytes included): the whole estimate,
   * holding every committed byte, when it is within the reservation cap (16× the committed bytes, at
   * most 64 MiB); else a new segment after the committed ones.
   */
  #grow(need: number): void {
    const committed = this.#before + this.#length;
    const estimate = Math.min(this.#estimate, MAX_RESERVE);
    if (
      estimate >= this.#before + need &&
      estimate > this.#before + this.#out.length &&
      estimate <= Math.max(committed * RESERVE_AHEAD, MIN_RESERVE)
    ) {
      const grown = Buffer.allocUnsafe(estimate);
      let at = 0;
      for (const segment of this.#segments) at += segment.copy(grown, at);
      this.#out.copy(grown, at, 0, this.#length);
      this.#out = grown;
      this.#length = committed;
      this.#segments = [];
      this.#before = 0;
      return;
    }
    const more = need - this.#length;
    if (this.#length > 0) {
      this.#segments.push(this.#out.subarray(0, this.#length));
      this.#before = committed;
    }
    this.#out = Buffer.allocUnsafe(Math.max(more, this.#before, MIN_RESERVE));
    this.#length = 0;
  }

  /** Decode clean base64 `src[start, end)` at the buffer's end as the payload behind `token`. */
  tentative(token: string, src: Uint8Array, start: number, end: number): boolean {
    this.#ensure(((end - start) / 4) * 3);
    const written = decodeCleanBase64(src, start, end, this.#out, this.#length);
    if (written < 0) {
      this.#tentative = null;
      return false;
    }
    this.#tentative = { token, start: this.#length, length: written, source: src.subarray(start, end) };
    return true;
  }

  /** One closed status record (its fields), in order. */
  add(fields: Fields): void {
    const r = this.#record++;
    if (this.#structural !== null) return;
    if (fields['agentDeviceProtocol'] !== SNAPSHOT_HELPER_PROTOCOL) return;
    if (fields['outputFormat'] !== SNAPSHOT_OUTPUT_FORMAT) return;
    const payload = fields['payloadBase64'];
    const rawIndex = fields['chunkIndex'];
    const rawCount = fields['chunkCount'];
    if (payload === undefined && rawIndex === undefined && rawCount === undefined) return;
    const index = parseIntegerField(rawIndex);
    const count = parseIntegerField(rawCount);
    if (payload === undefined || index === undefined || count === undefined || count < 1) {
      this.#structural = protocolError('snapshot chunk record has missing or invalid chunk fields', {
        reason: 'invalid-chunk-fields',
        record: r,
        chunkIndex: rawIndex ?? null,
        chunkCount: rawCount ?? null,
        hasPayload: payload !== undefined,
      });
      return;
    }
    this.#chunk(index, count, payload);
  }

  /**
   * One closed chunk record read straight from the bytes (`SnapshotOutputDecoder`'s record lane):
   * what `add` does for a record of this protocol and format with these integer fields (`count` ≥ 1)
   * and the clean base64 payload `src[start, end)`, without building the record's fields. False when
   * the payload is not clean base64 (the record then goes through `add`): nothing is committed, though
   * the buffer may have grown for the payload (within the reservation rule above).
   */
  addDecoded(index: number, count: number, src: Uint8Array, start: number, end: number): boolean {
    this.#ensure(((end - start) / 4) * 3);
    const written = decodeCleanBase64(src, start, end, this.#out, this.#length);
    if (written < 0) return false;
    // One reused description of the decoded bytes (no per-record allocation); never matched by a
    // text payload (`#place` gets null for it) and cleared below.
    const lane = this.#lane;
    lane.start = this.#length;
    lane.length = written;
    this.#tentative = lane;
    this.#record++;
    if (this.#structural === null) this.#chunk(index, count, null);
    this.#tentative = null;
    return true;
  }

  /** A well-formed chunk record: its place, or the error it makes. `payload` null: the tentative bytes. */
  #chunk(index: number, count: number, payload: string | null): void {
    if (this.#chunkCount === -1) this.#chunkCount = count;
    else if (count !== this.#chunkCount) {
      this.#structural = protocolError(
        `chunk ${index} says chunkCount=${count}, earlier chunks said ${this.#chunkCount}`,
        {
          reason: 'chunk-count-mismatch',
          chunkIndex: index,
          chunkCount: count,
          expectedChunkCount: this.#chunkCount,
        },
      );
      return;
    }
    if (index < 0 || index >= count) {
      this.#structural = protocolError(`chunk index ${index} is out of range 0..${count - 1}`, {
        reason: 'chunk-index-out-of-range',
        chunkIndex: index,
        chunkCount: count,
      });
      return;
    }
    this.#received++;
    this.#indices.push(index);
    if (this.#slotError !== null) return;
    // Until a slot error every chunk seen is placed: committed (below #next) or pending.
    if (index < this.#next || this.#pending.has(index)) {
      this.#slotError = duplicate(index, count);
      return;
    }
    this.#place(index, count, payload);
  }

  /** Decode (or commit the tentative decode of) chunk `index` into place. */
  #place(index: number, count: number, payload: string | null): void {
    const t = this.#tentative;
    this.#tentative = null;
    let bytes: Uint8Array | null = null;
    let length: number;
    if (t !== null && (payload === null || payload === t.token)) {
      length = t.length;
      if (index === this.#next && t.start === this.#length) {
        this.#commit(length, count);
        return;
      }
      bytes = Buffer.from(this.#out.subarray(t.start, t.start + length));
    } else {
      // The text path: a dirty or continued payload, exactly as `assembleSnapshotChunks` reads it.
      const p = payload as string;
      const text = t !== null && p.startsWith(`${t.token}\n`) ? rebuild(t, p) : p;
      length = decodedLength(text);
      if (length < 0) {
        this.#slotError = invalidBase64(index);
        return;
      }
      const piece = Buffer.allocUnsafe(length);
      const written = length === 0 ? 0 : piece.write(text, 0, length, 'base64');
      if (written !== length && (this.#contentError === -1 || index < this.#contentError)) {
        this.#contentError = index;
      }
      bytes = piece;
    }
    if (index !== this.#next) {
      this.#pending.set(index, bytes);
      return;
    }
    this.#ensure(length);
    this.#out.set(bytes, this.#length);
    this.#commit(length, count);
  }

  #commit(length: number, count: number): void {
    this.#length += length;
    this.#next++;
    if (this.#estimate === -1) {
      // The first chunk tells the size: count × its length (the helper's chunks are equal but the
      // last). Reserved now if the cap allows it, else at a later growth: the buffer is then made
      // once at its full size instead of being regrown and copied as it fills.
      this.#estimate = count * Math.max(length, 1);
      if (this.#estimate > this.#before + this.#out.length) {
        const cap = Math.max((this.#before + this.#length) * RESERVE_AHEAD, MIN_RESERVE);
        if (Math.min(this.#estimate, MAX_RESERVE) <= cap) this.#grow(this.#length);
      }
    }
    let piece = this.#pending.get(this.#next);
    while (piece !== undefined) {
      this.#pending.delete(this.#next);
      this.#ensure(piece.length);
      this.#out.set(piece, this.#length);
      this.#length += piece.length;
      this.#next++;
      piece = this.#pending.get(this.#next);
    }
  }

  /** The assembled XML, or the error `assembleSnapshotChunks` gives for the same records. */
  finish(): ChunkAssembly {
    if (this.#structural !== null) return this.#structural;
    const chunkCount = this.#chunkCount;
    if (this.#received === 0) {
      return protocolError('no snapshot chunks in the helper output', { reason: 'no-chunks' });
    }
    if (chunkCount > this.#received) {
      const present = this.#indices.sort((a, b) => a - b);
      let expect = 0;
      for (const index of present) {
        if (index === expect) expect++;
        else if (index < expect) return duplicate(index, chunkCount);
        else break;
      }
      return missing(expect, chunkCount, this.#received);
    }
    if (this.#slotError !== null) return this.#slotError;
    if (this.#contentError !== -1) return invalidBase64(this.#contentError);
    const last = this.#out.subarray(0, this.#length);
    const bytes =
      this.#segments.length === 0
        ? last
        : Buffer.concat([...this.#segments, last], this.#before + this.#length);
    this.#out = Buffer.allocUnsafe(0);
    this.#segments = [];
    this.#before = 0;
    this.#pending.clear();
    return bytesToXml(bytes, chunkCount);
  }
}

/** The payload text a continued token line stands for: the line's base64 + what the parser appended. */
function rebuild(t: Tentative, payload: string): string {
  return (
    Buffer.from(t.source.buffer, t.source.byteOffset, t.source.byteLength).toString('latin1') +
    payload.slice(t.token.length)
  );
}

/** UTF-8 check, decode and hierarchy check of the joined chunk bytes. */
export function bytesToXml(bytes: Buffer, chunkCount: number): ChunkAssembly {
  const total = bytes.length;
  if (!isUtf8(bytes)) {
    return protocolError('snapshot bytes are not valid UTF-8', { reason: 'invalid-utf8', byteLength: total });
  }
  const xml = decodeUtf8(bytes);
  if (!hasHierarchy(xml)) {
    return protocolError('snapshot XML has no <hierarchy ...> ... </hierarchy>', {
      reason: 'missing-hierarchy',
      byteLength: total,
      head: xml.slice(0, 80),
    });
  }
  return { ok: true, xml, byteLength: total, chunkCount };
}

export function duplicate(index: number, chunkCount: number): Failure {
  return protocolError(`chunk ${index} was received twice`, {
    reason: 'duplicate-chunk',
    chunkIndex: index,
    chunkCount,
  });
}

export function missing(index: number, chunkCount: number, received: number): Failure {
  return protocolError(`chunk ${index} of ${chunkCount} is missing`, {
    reason: 'missing-chunk',
    chunkIndex: index,
    chunkCount,
    received,
  });
}

export function invalidBase64(index: number): Failure {
  return protocolError(`chunk ${index} payload is not valid padded base64`, {
    reason: 'invalid-base64',
    chunkIndex: index,
  });
}

const PAYLOAD_PREFIX = Buffer.from('INSTRUMENTATION_STATUS: payloadBase64=', 'latin1');
const PREFIX_LENGTH = PAYLOAD_PREFIX.length;

/** Does `b[start, end)` start with the payload prefix (`whole`) or is it a start of it (`partial`)? */
function prefixMatch(b: Uint8Array, start: number, end: number): 'whole' | 'partial' | 'no' {
  const n = Math.min(end - start, PREFIX_LENGTH);
  for (let i = 0; i < n; i++) if (b[start + i] !== PAYLOAD_PREFIX[i]) return 'no';
  return n === PREFIX_LENGTH ? 'whole' : 'partial';
}

const STATUS_PREFIX = Buffer.from('INSTRUMENTATION_STATUS: ', 'latin1');
const STATUS_CODE_PREFIX = Buffer.from('INSTRUMENTATION_STATUS_CODE: ', 'latin1');
const PROTOCOL_VALUE = Buffer.from(SNAPSHOT_HELPER_PROTOCOL, 'latin1');
const FORMAT_VALUE = Buffer.from(SNAPSHOT_OUTPUT_FORMAT, 'latin1');
/** The keys of a chunk record, as bytes; their order here is their bit in `scanChunkRecord`'s `seen`. */
const KEYS = [
  'agentDeviceProtocol',
  'chunkCount',
  'chunkIndex',
  'helperApiVersion',
  'outputFormat',
  'payloadBase64',
].map((k) => Buffer.from(k, 'latin1'));
const [PROTOCOL_KEY, COUNT_KEY, INDEX_KEY, VERSION_KEY, FORMAT_KEY, PAYLOAD_KEY] = [0, 1, 2, 3, 4, 5];
const MAX_KEY_LENGTH = Math.max(...KEYS.map((k) => k.length));
/** Keys a record must have for the record lane (`helperApiVersion` may be missing). */
const REQUIRED = (1 << 6) - 1 - (1 << VERSION_KEY);

function bytesAt(b: Uint8Array, at: number, end: number, bytes: Uint8Array): boolean {
  const n = bytes.length;
  if (end - at < n) return false;
  for (let i = 0; i < n; i++) if (b[at + i] !== bytes[i]) return false;
  return true;
}

/** A decimal integer of 1–15 digits (no sign) in `b[start, end)`, else -1. */
function digitsAt(b: Uint8Array, start: number, end: number): number {
  if (end <= start || end - start > 15) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = (b[i] as number) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** What `scanChunkRecord` read. */
interface ChunkRecordScan {
  index: number;
  count: number;
  payloadStart: number;
  payloadEnd: number;
  /** First byte after the record's `INSTRUMENTATION_STATUS_CODE` line. */
  next: number;
}

/**
 * Does a whole plain chunk record start at `b[pos]` and end before `end`? Plain: `INSTRUMENTATION_STATUS:
 * key=value` lines ending in a bare '\n', keys `agentDeviceProtocol` (= this protocol),
 * `outputFormat` (= uiautomator-xml), `chunkIndex`, `chunkCount` (digits, count ≥ 1),
 * `payloadBase64` and optionally `helperApiVersion`, each once, in any order, then an
 * `INSTRUMENTATION_STATUS_CODE:` line. Such a record, fed to the text parser while it is idle, only
 * makes a status record of exactly these fields (no `Error`, no continuation): `addDecoded` does the
 * same from the bytes. Anything else is left to the text path.
 */
function scanChunkRecord(b: Uint8Array, pos: number, end: number, out: ChunkRecordScan): boolean {
  let seen = 0;
  let at = pos;
  for (;;) {
    const nl = b.indexOf(10, at);
    if (nl === -1 || nl >= end) return false;
    if (bytesAt(b, at, nl, STATUS_CODE_PREFIX)) {
      if (seen !== REQUIRED && seen !== (REQUIRED | (1 << VERSION_KEY))) return false;
      out.next = nl + 1;
      return true;
    }
    if (!bytesAt(b, at, nl, STATUS_PREFIX) || b[nl - 1] === 13) return false;
    const keyStart = at + STATUS_PREFIX.length;
    // The '=' within the longest key's reach only: a search to the piece's end per line start
    // would make a piece of '='-less lines cost quadratic time.
    let eq = keyStart;
    const keyEnd = Math.min(nl, keyStart + MAX_KEY_LENGTH + 1);
    while (eq < keyEnd && b[eq] !== 61) eq++;
    if (eq === keyEnd) return false;
    let key = -1;
    for (let k = 0; k < KEYS.length; k++) {
      const name = KEYS[k] as Buffer;
      if (name.length === eq - keyStart && bytesAt(b, keyStart, eq, name)) {
        key = k;
        break;
      }
    }
    if (key === -1 || (seen & (1 << key)) !== 0) return false;
    seen |= 1 << key;
    const value = eq + 1;
    if (key === PROTOCOL_KEY || key === FORMAT_KEY) {
      const expected = key === PROTOCOL_KEY ? PROTOCOL_VALUE : FORMAT_VALUE;
      if (nl - value !== expected.length || !bytesAt(b, value, nl, expected)) return false;
    } else if (key === INDEX_KEY) {
      out.index = digitsAt(b, value, nl);
      if (out.index < 0) return false;
    } else if (key === COUNT_KEY) {
      out.count = digitsAt(b, value, nl);
      if (out.count < 1) return false;
    } else if (key === PAYLOAD_KEY) {
      out.payloadStart = value;
      out.payloadEnd = nl;
    }
    at = nl + 1;
  }
}

/** What a streamed run's output holds besides the chunks, for `interpretSnapshotResult`. */
export interface StreamedStatuses {
  /** Status records seen (closed). */
  count: number;
  /** `Error` of the first status record that had one. */
  firstError: string | undefined;
}

/**
 * Push `am instrument -w` output bytes as they arrive (any split), then `end()`: the parsed output
 * (statuses not retained), what the statuses held, and the chunk assembler to finish.
 */
export class SnapshotOutputDecoder {
  readonly assembler = new SnapshotChunkAssembler();
  readonly statuses: StreamedStatuses = { count: 0, firstError: undefined };
  readonly #parser: InstrumentationOutputParser;
  readonly #nonce = `\u0000${randomBytes(6).toString('hex')}:`;
  #seq = 0;
  /** Bytes of a partial line that may be a payload line, held (as parts) until its end arrives. */
  #held: Uint8Array[] | null = null;
  /** Bytes held, and whether they already start with the whole payload prefix. */
  #heldLength = 0;
  #heldWhole = false;
  /** The parser holds a partial (non-payload) line: the next bytes up to '\n' continue it. */
  #midLine = false;
  #scratch: Buffer = Buffer.allocUnsafeSlow(0);
  readonly #scan: ChunkRecordScan = { index: 0, count: 0, payloadStart: 0, payloadEnd: 0, next: 0 };

  constructor() {
    this.#parser = new InstrumentationOutputParser({
      retainStatuses: false,
      onStatus: (status: InstrumentationStatus) => {
        this.statuses.count++;
        const error = status.fields['Error'];
        if (error !== undefined && this.statuses.firstError === undefined) this.statuses.firstError = error;
        this.assembler.add(status.fields);
      },
    });
  }

  push(chunk: Uint8Array): void {
    const length = chunk.length;
    let pos = 0;
    let runStart = 0;
    if (this.#midLine) {
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        this.#parser.push(chunk);
        return;
      }
      pos = nl + 1;
      this.#midLine = false;
    } else if (this.#held !== null) {
      const nl = chunk.indexOf(10);
      const held = this.#held;
      const piece = nl === -1 ? chunk : chunk.subarray(0, nl + 1);
      // The parts stay a list until the line ends (joined once): a long line costs O(its length).
      if (piece.length > 0) held.push(piece);
      this.#heldLength += piece.length;
      if (!this.#heldWhole) {
        // Until the whole prefix is in, held is shorter than it: check the line's first bytes.
        const head = Buffer.concat(held, Math.min(this.#heldLength, PREFIX_LENGTH));
        const lineLength = nl === -1 ? this.#heldLength : this.#heldLength - 1;
        const match = prefixMatch(head, 0, Math.min(lineLength, head.length));
        if (match === 'whole') this.#heldWhole = true;
        else if (match === 'no' && nl === -1) {
          this.#dropHeld();
          for (const part of held) this.#parser.push(part);
          this.#midLine = true;
          return;
        }
      }
      if (nl === -1) return;
      const whole = this.#heldWhole;
      const heldLength = this.#heldLength;
      this.#dropHeld();
      if (whole) {
        const line = this.#join(held, heldLength);
        this.#line(line, 0, line.length - 1, line.length);
      } else this.#parser.push(Buffer.concat(held));
      pos = nl + 1;
      runStart = pos;
    }
    const scan = this.#scan;
    while (pos < length) {
      // The record lane: a whole plain chunk record in this piece is decoded from its bytes, its
      // lines never made text, while the parser is between records (else the text path below).
      if (chunk[pos] === 73 && scanChunkRecord(chunk, pos, length, scan)) {
        this.#flush(chunk, runStart, pos);
        runStart = pos;
        if (
          this.#parser.idle &&
          this.assembler.addDecoded(scan.index, scan.count, chunk, scan.payloadStart, scan.payloadEnd)
        ) {
          this.statuses.count++;
          pos = scan.next;
          runStart = pos;
          continue;
        }
      }
      const nl = chunk.indexOf(10, pos);
      if (nl === -1) {
        if (prefixMatch(chunk, pos, length) !== 'no') {
          this.#flush(chunk, runStart, pos);
          this.#hold(chunk.subarray(pos));
        } else {
          this.#flush(chunk, runStart, length);
          this.#midLine = true;
        }
        return;
      }
      if (chunk[pos] === 73 && prefixMatch(chunk, pos, nl) === 'whole') {
        this.#flush(chunk, runStart, pos);
        this.#line(chunk, pos, nl, nl + 1);
        runStart = nl + 1;
      }
      pos = nl + 1;
    }
    this.#flush(chunk, runStart, length);
  }

  /**
   * A held payload line's parts joined into the decoder's one reused scratch buffer (a payload line
   * cut by a piece boundary is one per piece: joining each into a new buffer was ~0.06× the XML).
   * Safe to reuse: `#line` either decodes it at once or hands the parser a copy, and the assembler's
   * reference to it (a tentative payload's source) is replaced or cleared by the next payload line
   * before this buffer is written again.
   */
  #join(parts: Uint8Array[], length: number): Buffer {
    if (this.#scratch.length < length) {
      this.#scratch = Buffer.allocUnsafeSlow(Math.max(length, this.#scratch.length * 2, 4096));
    }
    let at = 0;
    for (const part of parts) {
      this.#scratch.set(part, at);
      at += part.length;
    }
    return this.#scratch.subarray(0, length);
  }

  /** Start holding a partial line that starts with (a start of) the payload prefix. */
  #hold(part: Uint8Array): void {
    this.#held = [part];
    this.#heldLength = part.length;
    this.#heldWhole = prefixMatch(part, 0, part.length) === 'whole';
  }

  #dropHeld(): void {
    this.#held = null;
    this.#heldLength = 0;
    this.#heldWhole = false;
  }

  /** A payload line `b[start, nl)` (and its '\n' up to `next`): decoded, or handed over as text. */
  #line(b: Uint8Array, start: number, nl: number, next: number): void {
    let end = nl;
    if (end > start && b[end - 1] === 13) end--;
    if (!this.#parser.finished) {
      const token = `${this.#nonce}${(this.#seq++).toString(36)}`;
      if (this.assembler.tentative(token, b, start + PREFIX_LENGTH, end)) {
        this.#parser.push(`INSTRUMENTATION_STATUS: payloadBase64=${token}${next > nl ? '\n' : ''}`);
        return;
      }
    }
    this.#parser.push(b.subarray(start, next));
  }

  #flush(b: Uint8Array, start: number, end: number): void {
    if (end > start) this.#parser.push(start === 0 && end === b.length ? b : b.subarray(start, end));
  }

  end() {
    if (this.#held !== null) {
      const line = Buffer.concat(this.#held);
      this.#dropHeld();
      if (prefixMatch(line, 0, line.length) === 'whole') this.#line(line, 0, line.length, line.length);
      else this.#parser.push(line);
    }
    return { output: this.#parser.end(), statuses: this.statuses, assembler: this.assembler };
  }
}
