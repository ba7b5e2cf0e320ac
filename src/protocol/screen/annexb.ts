/**
 * An H.264 Annex B byte stream (what `screenrecord --output-format=h264` writes) cut into access
 * units, pure and incremental over chunks cut anywhere (ITU-T H.264 §7.4.1.2.3 and Annex B).
 *
 * NAL units follow start codes `00 00 01` (a zero byte before one makes the 4-byte form, which
 * belongs to the unit after it). Once the current access unit holds a slice (VCL, NAL types 1–5), a
 * new one starts at an access unit delimiter (9), SPS (7), PPS (8), SEI (6), types 14–18, or at a
 * slice whose first_mb_in_slice is 0 (types 1 and 5: the first bit after the NAL header is 1, the
 * ue(v) code of 0). An access unit is flagged CONFIG when it holds an SPS or PPS and KEY when it
 * holds an IDR slice (5). Emitted bytes are the input's bytes, start codes included: the access
 * units of a stream concatenated are the stream from its first start code on.
 *
 * An access unit is known complete only when the next one starts; `flush()` ends the current one
 * (a stream that went quiet, or ended). Bytes before the first start code are skipped (counted).
 */

export const NAL_SLICE = 1;
export const NAL_IDR = 5;
export const NAL_SEI = 6;
export const NAL_SPS = 7;
export const NAL_PPS = 8;
export const NAL_AUD = 9;

export interface AccessUnit {
  /** Annex B bytes (start codes included). */
  data: Uint8Array;
  /** It holds an SPS or a PPS. */
  config: boolean;
  /** It holds an IDR slice. */
  key: boolean;
  /** It holds a slice (a picture); false for a unit of parameter sets alone. */
  picture: boolean;
}

const isVcl = (type: number) => type >= 1 && type <= 5;
/** NAL types that start an access unit once the current one has a picture (§7.4.1.2.3). */
const startsUnit = (type: number) =>
  type === 6 || type === 7 || type === 8 || type === 9 || (type >= 14 && type <= 18);

/** A slice (non-IDR or IDR) whose first_mb_in_slice is 0: the first bit after the header is 1. */
const firstSliceOfPicture = (type: number, next: number) => (type === 1 || type === 5) && (next & 0x80) !== 0;

export class AnnexBSplitter {
  #buf = new Uint8Array(64 * 1024);
  #len = 0;
  /** Start of the current access unit in #buf, -1 before the first start code. */
  #unitStart = -1;
  /** Where the next start code search begins. */
  #scan = 0;
  #picture = false;
  #config = false;
  #key = false;
  #skipped = 0;

  /** Bytes skipped before the first start code (or after a `flush()` that cut a unit). */
  get skipped(): number {
    return this.#skipped;
  }

  /** Bytes held for the access unit in progress. */
  get buffered(): number {
    return this.#len;
  }

  /** Access units completed by `chunk`. */
  push(chunk: Uint8Array): AccessUnit[] {
    this.#append(chunk);
    const out: AccessUnit[] = [];
    const buf = this.#buf;
    // A start code is 00 00 01 followed by the NAL header byte and one more (the slice's first bit).
    let i = this.#scan;
    for (; i + 4 < this.#len; i++) {
      if (buf[i + 2] !== 1) {
        // Skip ahead: a start code needs two zeros before the 1.
        if ((buf[i + 2] as number) > 1) i += 2;
        else if (buf[i + 1] !== 0) i += 1;
        continue;
      }
      if (buf[i] !== 0 || buf[i + 1] !== 0) continue;
      const header = buf[i + 3] as number;
      const type = header & 0x1f;
      const codeStart = i > 0 && buf[i - 1] === 0 && i - 1 > this.#unitStart ? i - 1 : i;
      if (this.#unitStart < 0) {
        this.#skipped += codeStart;
        this.#unitStart = codeStart;
      } else if (this.#picture && (startsUnit(type) || firstSliceOfPicture(type, buf[i + 4] as number))) {
        out.push(this.#unit(this.#unitStart, codeStart));
        this.#unitStart = codeStart;
      }
      if (isVcl(type)) this.#picture = true;
      if (type === NAL_SPS || type === NAL_PPS) this.#config = true;
      if (type === NAL_IDR) this.#key = true;
      i += 3;
    }
    this.#scan = i;
    if (this.#unitStart < 0 && this.#scan > 1) {
      // Nothing but garbage so far: keep what a start code (with its leading zero) may begin with.
      this.#skipped += this.#scan - 1;
      this.#compact(this.#scan - 1);
    } else if (this.#unitStart > 0) {
      this.#compact(this.#unitStart);
    }
    return out;
  }

  /** End the access unit in progress (a quiet or ended stream): it is answered, or null when none. */
  flush(): AccessUnit | null {
    if (this.#unitStart < 0 || this.#len <= this.#unitStart) {
      this.#skipped += this.#len;
      this.#len = 0;
      this.#scan = 0;
      return null;
    }
    const unit = this.#unit(this.#unitStart, this.#len);
    this.#len = 0;
    this.#scan = 0;
    this.#unitStart = -1;
    return unit;
  }

  #unit(from: number, to: number): AccessUnit {
    const unit = {
      data: this.#buf.slice(from, to),
      config: this.#config,
      key: this.#key,
      picture: this.#picture,
    };
    this.#picture = false;
    this.#config = false;
    this.#key = false;
    return unit;
  }

  #append(chunk: Uint8Array): void {
    if (this.#len + chunk.length > this.#buf.length) {
      const next = new Uint8Array(Math.max(this.#buf.length * 2, this.#len + chunk.length));
      next.set(this.#buf.subarray(0, this.#len));
      this.#buf = next;
    }
    this.#buf.set(chunk, this.#len);
    this.#len += chunk.length;
  }

  /** Drop the first `n` bytes. */
  #compact(n: number): void {
    this.#buf.copyWithin(0, n, this.#len);
    this.#len -= n;
    this.#scan = Math.max(0, this.#scan - n);
    if (this.#unitStart >= 0) this.#unitStart -= n;
  }
}

/** The NAL units of Annex B bytes: each as [start of its start code, start of its header, end). */
export function nalUnits(
  data: Uint8Array,
): Array<{ type: number; codeStart: number; start: number; end: number }> {
  const units: Array<{ type: number; codeStart: number; start: number; end: number }> = [];
  for (let i = 0; i + 3 < data.length; i++) {
    if (data[i] !== 0 || data[i + 1] !== 0 || data[i + 2] !== 1) continue;
    const codeStart = i > 0 && data[i - 1] === 0 ? i - 1 : i;
    const last = units[units.length - 1];
    if (last !== undefined) last.end = codeStart;
    units.push({ type: (data[i + 3] as number) & 0x1f, codeStart, start: i + 3, end: data.length });
    i += 3;
  }
  return units;
}

/** The first NAL unit of `type` in Annex B bytes (header byte first, no start code), or null. */
export function findNal(data: Uint8Array, type: number): Uint8Array | null {
  const unit = nalUnits(data).find((u) => u.type === type);
  return unit === undefined ? null : data.subarray(unit.start, unit.end);
}

/** A whole Annex B stream (a file, a test's encoding) cut into access units. */
export function splitStream(stream: Uint8Array): AccessUnit[] {
  const splitter = new AnnexBSplitter();
  const units = splitter.push(stream);
  const last = splitter.flush();
  if (last !== null) units.push(last);
  return units;
}

/**
 * An access unit cut in two: its SPS/PPS units (a CONFIG packet's payload) and the rest (the
 * picture). `config` is null when it holds no parameter set, `picture` null when it holds nothing else.
 */
export function splitParameterSets(data: Uint8Array): {
  config: Uint8Array | null;
  picture: Uint8Array | null;
} {
  const config: Uint8Array[] = [];
  const rest: Uint8Array[] = [];
  for (const u of nalUnits(data)) {
    const bytes = data.subarray(u.codeStart, u.end);
    if (u.type === NAL_SPS || u.type === NAL_PPS) config.push(bytes);
    else rest.push(bytes);
  }
  const join = (parts: Uint8Array[]) => {
    if (parts.length === 0) return null;
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };
  return { config: join(config), picture: join(rest) };
}
