/**
 * What the bridge reads of an H.264 sequence parameter set (ITU-T H.264 §7.3.2.1.1), pure: the
 * WebCodecs codec string (`avc1.PPCCLL`: profile_idc, the constraint flags byte, level_idc, in hex)
 * and the picture size after cropping. The SPS is given as a NAL unit (header byte first, no start
 * code); emulation prevention bytes (`00 00 03`) are removed before reading.
 */
import { BridgeError } from '../../errors.ts';

export class SpsError extends BridgeError {
  constructor(message: string) {
    super('HELPER_PROTOCOL_ERROR', `H.264 SPS: ${message}`);
    this.name = 'SpsError';
  }
}

const hex2 = (n: number) => n.toString(16).padStart(2, '0');

function checkSps(sps: Uint8Array): void {
  if (sps.length < 4) throw new SpsError(`${sps.length} bytes is too short for an SPS`);
  if (((sps[0] as number) & 0x1f) !== 7) {
    throw new SpsError(`NAL type ${(sps[0] as number) & 0x1f} is not an SPS (7)`);
  }
}

/** The RBSP of a NAL unit's payload (after the header byte): `00 00 03` → `00 00`. */
export function unescapeRbsp(nal: Uint8Array): Uint8Array {
  const out = new Uint8Array(nal.length);
  let n = 0;
  let zeros = 0;
  for (let i = 1; i < nal.length; i++) {
    const b = nal[i] as number;
    if (zeros >= 2 && b === 3) {
      zeros = 0;
      continue;
    }
    zeros = b === 0 ? zeros + 1 : 0;
    out[n++] = b;
  }
  return out.subarray(0, n);
}

/** `avc1.PPCCLL` for a WebCodecs decoder (e.g. `avc1.64001f`: High profile, level 3.1). */
export function codecString(sps: Uint8Array): string {
  checkSps(sps);
  const rbsp = unescapeRbsp(sps);
  return `avc1.${hex2(rbsp[0] as number)}${hex2(rbsp[1] as number)}${hex2(rbsp[2] as number)}`;
}

class BitReader {
  readonly #bytes: Uint8Array;
  #bit = 0;
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }
  u1(): number {
    const byte = this.#bytes[this.#bit >> 3];
    if (byte === undefined) throw new SpsError('truncated');
    const v = (byte >> (7 - (this.#bit & 7))) & 1;
    this.#bit++;
    return v;
  }
  u(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + this.u1();
    return v;
  }
  ue(): number {
    let zeros = 0;
    while (this.u1() === 0) {
      if (++zeros > 31) throw new SpsError('an exp-Golomb code longer than 32 bits');
    }
    return 2 ** zeros - 1 + this.u(zeros);
  }
  se(): number {
    const k = this.ue();
    return k % 2 === 1 ? (k + 1) / 2 : -(k / 2);
  }
}

const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

export interface SpsInfo {
  profileIdc: number;
  constraintFlags: number;
  levelIdc: number;
  /** Luma size after the frame cropping. */
  width: number;
  height: number;
}

/** The SPS's profile, level and cropped picture size. */
export function parseSps(sps: Uint8Array): SpsInfo {
  checkSps(sps);
  const rbsp = unescapeRbsp(sps);
  const r = new BitReader(rbsp);
  const profileIdc = r.u(8);
  const constraintFlags = r.u(8);
  const levelIdc = r.u(8);
  r.ue(); // seq_parameter_set_id
  let chromaFormatIdc = 1;
  let separateColourPlane = 0;
  if (HIGH_PROFILES.has(profileIdc)) {
    chromaFormatIdc = r.ue();
    if (chromaFormatIdc > 3) throw new SpsError(`chroma_format_idc ${chromaFormatIdc}`);
    if (chromaFormatIdc === 3) separateColourPlane = r.u1();
    r.ue(); // bit_depth_luma_minus8
    r.ue(); // bit_depth_chroma_minus8
    r.u1(); // qpprime_y_zero_transform_bypass_flag
    if (r.u1() === 1) {
      // seq_scaling_matrix_present_flag: skip each present list (delta_scale codes).
      const lists = chromaFormatIdc === 3 ? 12 : 8;
      for (let i = 0; i < lists; i++) {
        if (r.u1() === 0) continue;
        const size = i < 6 ? 16 : 64;
        let last = 8;
        let next = 8;
        for (let j = 0; j < size && next !== 0; j++) {
          next = (last + r.se() + 256) % 256;
          last = next === 0 ? last : next;
        }
      }
    }
  }
  r.ue(); // log2_max_frame_num_minus4
  const pocType = r.ue();
  if (pocType === 0) r.ue();
  else if (pocType === 1) {
    r.u1();
    r.se();
    r.se();
    const cycle = r.ue();
    if (cycle > 255) throw new SpsError(`num_ref_frames_in_pic_order_cnt_cycle ${cycle}`);
    for (let i = 0; i < cycle; i++) r.se();
  }
  r.ue(); // max_num_ref_frames
  r.u1(); // gaps_in_frame_num_value_allowed_flag
  const widthMbs = r.ue() + 1;
  const heightMapUnits = r.ue() + 1;
  const frameMbsOnly = r.u1();
  if (frameMbsOnly === 0) r.u1(); // mb_adaptive_frame_field_flag
  r.u1(); // direct_8x8_inference_flag
  let crop = [0, 0, 0, 0];
  if (r.u1() === 1) crop = [r.ue(), r.ue(), r.ue(), r.ue()];
  const chroma = separateColourPlane === 1 ? 0 : chromaFormatIdc;
  const subWidth = chroma === 1 || chroma === 2 ? 2 : 1;
  const subHeight = chroma === 1 ? 2 : 1;
  const cropX = chroma === 0 ? 1 : subWidth;
  const cropY = (chroma === 0 ? 1 : subHeight) * (2 - frameMbsOnly);
  const [left, right, top, bottom] = crop as [number, number, number, number];
  const width = widthMbs * 16 - cropX * (left + right);
  const height = (2 - frameMbsOnly) * heightMapUnits * 16 - cropY * (top + bottom);
  if (width <= 0 || height <= 0) throw new SpsError(`cropping leaves a ${width}×${height} picture`);
  return { profileIdc, constraintFlags, levelIdc, width, height };
}
