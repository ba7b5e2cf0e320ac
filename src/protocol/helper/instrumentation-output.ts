/**
 * Parser of raw `am instrument -w` output (the instrumentation "raw mode" text protocol):
 *
 *   INSTRUMENTATION_STATUS: key=value        status record fields ...
 *   INSTRUMENTATION_STATUS_CODE: n           ... closed by a status code
 *   INSTRUMENTATION_RESULT: key=value        final result fields ...
 *   INSTRUMENTATION_CODE: n                  ... closed by the instrumentation code
 *
 * Rules: a field splits on the first `=`; a line without a known prefix continues the value of the
 * previous field (joined with "\n") while a record or the result is open, otherwise it is noise;
 * CRLF line ends (shell v1 on old devices) are accepted; keys may come in any order and a repeated
 * key keeps its last value. `INSTRUMENTATION_FAILED: comp` (printed by `am` anywhere on a noise line,
 * e.g. after `android.util.AndroidException: `), `INSTRUMENTATION_ABORTED: ...` and
 * `onError: commandError=... message=...` are recorded. Output cut off before `INSTRUMENTATION_CODE`
 * yields `code: null` (and an open status record, if any, in `pendingStatus`).
 *
 * Never throws on arbitrary input; the parse is structural, interpretation (ok/failed/crashed) is in
 * `chunks.ts` (`interpretSnapshotResult`). Pure, no I/O. Written for throughput: one `indexOf('\n')`
 * per line, prefix tests with `startsWith` at an offset, values as slices of the input.
 */
import { StringDecoder } from 'node:string_decoder';

export interface InstrumentationStatus {
  /** Field values in arrival order of their keys (null prototype: any key is safe). */
  fields: Record<string, string>;
  /** The `INSTRUMENTATION_STATUS_CODE`, or null when it was not an integer. */
  code: number | null;
}

export interface InstrumentationOutput {
  /** Every closed status record, in order. */
  statuses: InstrumentationStatus[];
  /** A status record still open when the output ended (no `INSTRUMENTATION_STATUS_CODE`). */
  pendingStatus: Record<string, string> | null;
  /** `INSTRUMENTATION_RESULT` fields (empty object when none were printed). */
  result: Record<string, string>;
  /** `INSTRUMENTATION_CODE`, or null when the output ended without one (cut off / crashed `am`). */
  code: number | null;
  /** Component named by `INSTRUMENTATION_FAILED: comp`, if printed. */
  failed: string | null;
  /** Text of `INSTRUMENTATION_ABORTED: ...` or `onError: ...`, if printed. */
  aborted: string | null;
  /** Up to 32 noise lines (each at most 512 chars), for diagnostics. */
  noise: string[];
}

export interface InstrumentationOutputParserOptions {
  /** Called for each status record as soon as its `INSTRUMENTATION_STATUS_CODE` line arrives. */
  onStatus?: (status: InstrumentationStatus) => void;
  /** Keep closed status records in the final output (default true). */
  retainStatuses?: boolean;
}

const STATUS = 'INSTRUMENTATION_STATUS: ';
const STATUS_CODE = 'INSTRUMENTATION_STATUS_CODE: ';
const RESULT = 'INSTRUMENTATION_RESULT: ';
const CODE = 'INSTRUMENTATION_CODE: ';
const FAILED = 'INSTRUMENTATION_FAILED: ';
const ABORTED = 'INSTRUMENTATION_ABORTED: ';
const ON_ERROR = 'onError: ';
const MAX_NOISE_LINES = 32;
const MAX_NOISE_CHARS = 512;
const NO_STATUSES: readonly InstrumentationStatus[] = Object.freeze([]);

/** Which record the field being built belongs to. */
type Target = 0 | 1 | 2;
const Target = { None: 0, Status: 1, Result: 2 } as const;

function newRecord(): Record<string, string> {
  return Object.create(null) as Record<string, string>;
}

/** Parse a leading optional sign and digits (trimmed); null when not an integer. */
function parseCode(line: string, start: number, end: number): number | null {
  while (start < end && line.charCodeAt(start) === 32) start++;
  while (end > start && line.charCodeAt(end - 1) === 32) end--;
  if (start === end || end - start > 12) return null;
  let i = start;
  const negative = line.charCodeAt(i) === 45;
  if (negative) i++;
  if (i === end) return null;
  let n = 0;
  for (; i < end; i++) {
    const c = line.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return null;
    n = n * 10 + c;
  }
  return negative ? -n : n;
}

/**
 * Incremental parser: `push` text or bytes as they arrive (any split, including inside a line, a
 * CRLF pair or a UTF-8 sequence), then `end()` for the result. `push` returns the status records
 * completed by that chunk.
 */
export class InstrumentationOutputParser {
  #statuses: InstrumentationStatus[] = [];
  #status: Record<string, string> | null = null;
  #result: Record<string, string> = newRecord();
  #code: number | null = null;
  #failed: string | null = null;
  #aborted: string | null = null;
  #noise: string[] = [];
  #done = false;
  #ended = false;
  // The field currently receiving continuation lines.
  #target: Target = Target.None as Target;
  #key = '';
  #value = '';
  #continuation: string[] | null = null;
  // Partial line carried between pushes (kept as parts: no repeated concatenation).
  #carry: string[] = [];
  #decoder: StringDecoder | null = null;
  #emitted: InstrumentationStatus[] | null = null;
  // `#findFailed`'s last answer and the text it was for.
  #failedText: string | null = null;
  #failedAt = -1;
  readonly #onStatus: ((status: InstrumentationStatus) => void) | undefined;
  readonly #retain: boolean;

  constructor(options: InstrumentationOutputParserOptions = {}) {
    this.#onStatus = options.onStatus;
    this.#retain = options.retainStatuses ?? true;
  }

  /** `INSTRUMENTATION_CODE` was read (later lines are noise) or `end()` was called. */
  get finished(): boolean {
    return this.#done || this.#ended;
  }

  /**
   * Between records: no status record or field open, no partial line carried, not finished. A
   * complete status record fed now only adds that record (the parser's other state is untouched).
   */
  get idle(): boolean {
    return (
      this.#target === Target.None &&
      this.#status === null &&
      this.#carry.length === 0 &&
      !this.#done &&
      !this.#ended
    );
  }

  /** Feed the next piece of output. Returns the status records it completed (often none). */
  push(chunk: string | Uint8Array): readonly InstrumentationStatus[] {
    if (this.#ended) return NO_STATUSES;
    let text: string;
    if (typeof chunk === 'string') {
      text = chunk;
    } else {
      this.#decoder ??= new StringDecoder('utf8');
      text = this.#decoder.write(chunk);
    }
    this.#emitted = null;
    this.#feed(text);
    const emitted = this.#emitted;
    this.#emitted = null;
    return emitted ?? NO_STATUSES;
  }

  /** Finish: flush a last line without newline and return the parsed output. Idempotent. */
  end(): InstrumentationOutput {
    if (!this.#ended) {
      if (this.#decoder !== null) {
        const rest = this.#decoder.end();
        if (rest.length > 0) this.#feed(rest);
      }
      this.#ended = true;
      if (this.#carry.length > 0) {
        const line = this.#carry.length === 1 ? (this.#carry[0] as string) : this.#carry.join('');
        this.#carry = [];
        this.#failedText = null;
        this.#line(line, 0, line.length);
      }
      this.#commit();
    }
    return {
      statuses: this.#statuses,
      pendingStatus: this.#status,
      result: this.#result,
      code: this.#code,
      failed: this.#failed,
      aborted: this.#aborted,
      noise: this.#noise,
    };
  }

  #feed(text: string): void {
    this.#failedText = null;
    let start = 0;
    let nl = text.indexOf('\n');
    if (nl === -1) {
      if (text.length > 0) this.#carry.push(text);
      return;
    }
    if (this.#carry.length > 0) {
      this.#carry.push(text.slice(0, nl));
      const line = this.#carry.join('');
      this.#carry = [];
      this.#line(line, 0, line.length);
      this.#failedText = null;
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    while (nl !== -1) {
      this.#line(text, start, nl);
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    if (start < text.length) this.#carry.push(start === 0 ? text : text.slice(start));
  }

  /** One line: `text[start, end)` without its '\n'. */
  #line(text: string, start: number, end: number): void {
    if (end > start && text.charCodeAt(end - 1) === 13) end--;
    if (this.#done) {
      this.#noiseLine(text, start, end);
      return;
    }
    // All prefixes start with "INSTRUMENTATION_" (16 chars); test the distinguishing char first.
    if (text.charCodeAt(start) === 73 && text.startsWith('INSTRUMENTATION_', start)) {
      const c = text.charCodeAt(start + 16);
      if (c === 83 /* S */) {
        if (text.startsWith(STATUS, start)) {
          this.#field(Target.Status, text, start + STATUS.length, end);
          return;
        }
        if (text.startsWith(STATUS_CODE, start)) {
          this.#closeStatus(parseCode(text, start + STATUS_CODE.length, end));
          return;
        }
      } else if (c === 82 /* R */) {
        if (text.startsWith(RESULT, start)) {
          this.#field(Target.Result, text, start + RESULT.length, end);
          return;
        }
      } else if (c === 67 /* C */) {
        if (text.startsWith(CODE, start)) {
          this.#commit();
          this.#target = Target.None;
          this.#code = parseCode(text, start + CODE.length, end);
          this.#done = true;
          return;
        }
      } else if (c === 70 /* F */) {
        if (text.startsWith(FAILED, start)) {
          this.#commit();
          this.#target = Target.None;
          this.#failed = text.slice(start + FAILED.length, end).trim();
          return;
        }
      } else if (c === 65 /* A */) {
        if (text.startsWith(ABORTED, start)) {
          this.#commit();
          this.#target = Target.None;
          this.#aborted = text.slice(start + ABORTED.length, end).trim();
          return;
        }
      }
    }
    if (this.#target !== Target.None) {
      // Continuation of the previous value.
      this.#continuation ??= [];
      this.#continuation.push(text.slice(start, end));
      return;
    }
    this.#noiseLine(text, start, end);
  }

  #noiseLine(text: string, start: number, end: number): void {
    if (start === end) return;
    if (this.#failed === null) {
      const at = this.#findFailed(text, start);
      if (at !== -1 && at < end) this.#failed = text.slice(at + FAILED.length, end).trim();
    }
    if (this.#aborted === null && text.startsWith(ON_ERROR, start)) {
      this.#aborted = text.slice(start + ON_ERROR.length, end).trim();
    }
    if (this.#noise.length < MAX_NOISE_LINES) {
      this.#noise.push(text.slice(start, Math.min(end, start + MAX_NOISE_CHARS)));
    }
  }

  /**
   * The first `INSTRUMENTATION_FAILED: ` in `text` at or after `start`, or -1. The last search is
   * reused while it still answers (each text is searched about once, not once per noise line:
   * that was quadratic on a run of noise lines). `#failedText` is reset before every new text.
   */
  #findFailed(text: string, start: number): number {
    if (this.#failedText !== text || (this.#failedAt !== -1 && this.#failedAt < start)) {
      this.#failedText = text;
      this.#failedAt = text.indexOf(FAILED, start);
    }
    return this.#failedAt;
  }

  #field(target: Target, text: string, start: number, end: number): void {
    this.#commit();
    // Within the line only: `indexOf` would search to the text's end for a line without '='
    // (quadratic on a run of such lines).
    let eq = start;
    while (eq < end && text.charCodeAt(eq) !== 61) eq++;
    if (eq === end) {
      // A key without '=': keep it with an empty value.
      this.#key = text.slice(start, end);
      this.#value = '';
    } else {
      this.#key = text.slice(start, eq);
      this.#value = text.slice(eq + 1, end);
    }
    this.#target = target;
    if (target === Target.Status) this.#status ??= newRecord();
  }

  /** Store the field being built (with its continuation lines) into its record. */
  #commit(): void {
    if (this.#target === Target.None) return;
    let value = this.#value;
    if (this.#continuation !== null) {
      this.#continuation.unshift(value);
      value = this.#continuation.join('\n');
      this.#continuation = null;
    }
    if (this.#target === Target.Status) (this.#status as Record<string, string>)[this.#key] = value;
    else this.#result[this.#key] = value;
    this.#target = Target.None;
  }

  #closeStatus(code: number | null): void {
    this.#commit();
    const status: InstrumentationStatus = { fields: this.#status ?? newRecord(), code };
    this.#status = null;
    if (this.#retain) this.#statuses.push(status);
    if (this.#onStatus !== undefined) this.#onStatus(status);
    this.#emitted ??= [];
    this.#emitted.push(status);
  }
}

/** One-shot parse of complete `am instrument -w` output. Never throws. */
export function parseInstrumentationOutput(text: string): InstrumentationOutput {
  const parser = new InstrumentationOutputParser();
  parser.push(text);
  return parser.end();
}
