/**
 * `android-touch-plan-v1`: the planned-gesture payload of the snapshot helper's `gesture` mode
 * (the snapshot helper contract, "One-Shot Modes"). Pure: types, validator, base64 codec and builders. Shared by the
 * host driver (which encodes plans) and the simulator (which validates what it receives).
 *
 * Decisions the seed leaves open:
 * - `protocol`: optional on input; when present it must equal `android-touch-plan-v1` (the real host
 *   sends it, the real helper defaults it). `encodeTouchPlanBase64` always writes it first.
 * - `x`/`y`: any finite JSON number, fractions allowed (the helper reads doubles and injects floats).
 *   Builders round coordinates to 0.01 px.
 * - `offsetMs`, `durationMs`, `pointerId`: JSON numbers that are integers within ±(2^53 - 1) (no
 *   numeric strings).
 * - Unknown fields are ignored and dropped from the returned plan (the helper ignores them too).
 * - Every rule is checked and every failure reported, each with a dotted path
 *   (`pointers.1.samples.3.offsetMs`), not just the first one.
 */
import { describeValue } from '../../describe-value.ts';
import { parseStrictJson } from '../../strict-json.ts';

export const TOUCH_PLAN_PROTOCOL = 'android-touch-plan-v1';
export const TOUCH_PLAN_MAX_DURATION_MS = 120_000;

export type TouchPlanKind = 'swipe' | 'transform';

export interface TouchSample {
  offsetMs: number;
  x: number;
  y: number;
}

export interface TouchPointer {
  pointerId: number;
  samples: TouchSample[];
}

export interface TouchPlan {
  kind: TouchPlanKind;
  durationMs: number;
  pointers: TouchPointer[];
}

export interface TouchPlanError {
  path: string;
  message: string;
}

export type TouchPlanValidation =
  | { valid: true; plan: TouchPlan }
  | { valid: false; errors: TouchPlanError[] };

export interface Point {
  x: number;
  y: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An integer a JSON reader on either end holds exactly (|n| ≤ 2^53 - 1): the helper reads these as longs. */
function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function got(value: unknown): string {
  return value === undefined ? 'missing' : `got ${describeValue(value)}`;
}

/** Validate an untrusted value against the seed's `android-touch-plan-v1` rules. Never throws. */
export function validateTouchPlan(input: unknown): TouchPlanValidation {
  const errors: TouchPlanError[] = [];
  const fail = (path: string, message: string): void => {
    errors.push({ path, message });
  };
  if (!isRecord(input)) {
    return {
      valid: false,
      errors: [{ path: '', message: `touch plan must be a JSON object, ${got(input)}` }],
    };
  }

  if ('protocol' in input && input['protocol'] !== TOUCH_PLAN_PROTOCOL) {
    fail('protocol', `must be ${TOUCH_PLAN_PROTOCOL} when present, ${got(input['protocol'])}`);
  }

  const kindValue = input['kind'];
  const kind: TouchPlanKind | undefined =
    kindValue === 'swipe' || kindValue === 'transform' ? kindValue : undefined;
  if (kind === undefined) {
    fail('kind', `must be swipe (one pointer) or transform (two pointers), ${got(kindValue)}`);
  }

  const durationValue = input['durationMs'];
  let durationMs: number | undefined;
  if (!isInteger(durationValue) || durationValue < 0 || durationValue > TOUCH_PLAN_MAX_DURATION_MS) {
    fail('durationMs', `must be an integer, 0-${TOUCH_PLAN_MAX_DURATION_MS}, ${got(durationValue)}`);
  } else {
    durationMs = durationValue;
  }

  const pointersValue = input['pointers'];
  const pointers: TouchPointer[] = [];
  if (!Array.isArray(pointersValue)) {
    fail('pointers', `must be an array of { pointerId, samples }, ${got(pointersValue)}`);
  } else {
    if (kind === 'swipe' && pointersValue.length !== 1) {
      fail('pointers', `swipe requires exactly one pointer, got ${pointersValue.length}`);
    } else if (kind === 'transform' && pointersValue.length !== 2) {
      fail('pointers', `transform requires exactly two pointers, got ${pointersValue.length}`);
    }
    pointersValue.forEach((pointerValue: unknown, p) => {
      const pointer = validatePointer(pointerValue, p, durationMs, fail);
      if (pointer !== undefined) pointers.push(pointer);
    });
    if (kind === 'transform' && pointersValue.length === 2 && pointers.length === 2) {
      checkSharedOffsets(pointers, fail);
    }
  }

  if (errors.length > 0 || kind === undefined || durationMs === undefined) return { valid: false, errors };
  return { valid: true, plan: { kind, durationMs, pointers } };
}

function validatePointer(
  value: unknown,
  p: number,
  durationMs: number | undefined,
  fail: (path: string, message: string) => void,
): TouchPointer | undefined {
  const base = `pointers.${p}`;
  if (!isRecord(value)) {
    fail(base, `must be an object { pointerId, samples }, ${got(value)}`);
    return undefined;
  }
  let ok = true;
  if (value['pointerId'] !== p) {
    fail(
      `${base}.pointerId`,
      `pointerIds must be ordered from 0 (expected ${p}), ${got(value['pointerId'])}`,
    );
    ok = false;
  }
  const samplesValue = value['samples'];
  if (!Array.isArray(samplesValue)) {
    fail(`${base}.samples`, `must be an array of { offsetMs, x, y }, ${got(samplesValue)}`);
    return undefined;
  }
  if (samplesValue.length < 2) {
    fail(`${base}.samples`, `must have at least two entries, got ${samplesValue.length}`);
    ok = false;
  }
  const samples: TouchSample[] = [];
  let previous: number | undefined;
  samplesValue.forEach((sampleValue: unknown, s) => {
    const path = `${base}.samples.${s}`;
    if (!isRecord(sampleValue)) {
      fail(path, `must be an object { offsetMs, x, y }, ${got(sampleValue)}`);
      ok = false;
      previous = undefined;
      return;
    }
    const { offsetMs, x, y } = sampleValue;
    let sampleOk = true;
    if (!isInteger(offsetMs)) {
      fail(`${path}.offsetMs`, `must be an integer, ${got(offsetMs)}`);
      sampleOk = false;
    } else {
      if (s === 0 && offsetMs !== 0) {
        fail(`${path}.offsetMs`, `the first sample's offsetMs must be 0, got ${offsetMs}`);
        sampleOk = false;
      }
      if (previous !== undefined) {
        if (offsetMs < previous) {
          fail(
            `${path}.offsetMs`,
            `offsetMs values must be strictly increasing, got ${offsetMs} after ${previous}`,
          );
          sampleOk = false;
        } else if (offsetMs === previous && durationMs !== 0) {
          fail(
            `${path}.offsetMs`,
            `offsetMs values must be strictly increasing (equal offsets are only allowed when durationMs is 0), got ${offsetMs} twice`,
          );
          sampleOk = false;
        }
      }
      if (s === samplesValue.length - 1 && s > 0 && durationMs !== undefined && offsetMs !== durationMs) {
        fail(
          `${path}.offsetMs`,
          `the last sample's offsetMs must equal durationMs (${durationMs}), got ${offsetMs}`,
        );
        sampleOk = false;
      }
    }
    if (!isFiniteNumber(x)) {
      fail(`${path}.x`, `must be a finite number, ${got(x)}`);
      sampleOk = false;
    }
    if (!isFiniteNumber(y)) {
      fail(`${path}.y`, `must be a finite number, ${got(y)}`);
      sampleOk = false;
    }
    previous = isInteger(offsetMs) ? offsetMs : undefined;
    if (!sampleOk) ok = false;
    else samples.push({ offsetMs: offsetMs as number, x: x as number, y: y as number });
  });
  return ok ? { pointerId: p, samples } : undefined;
}

function checkSharedOffsets(pointers: TouchPointer[], fail: (path: string, message: string) => void): void {
  const [first, second] = pointers as [TouchPointer, TouchPointer];
  if (first.samples.length !== second.samples.length) {
    fail(
      'pointers.1.samples',
      `both transform pointers must share the same offsetMs sequence (${first.samples.length} samples vs ${second.samples.length})`,
    );
    return;
  }
  first.samples.forEach((sample, s) => {
    const other = second.samples[s];
    if (other !== undefined && other.offsetMs !== sample.offsetMs) {
      fail(
        `pointers.1.samples.${s}.offsetMs`,
        `both transform pointers must share the same offsetMs sequence (pointer 0 has ${sample.offsetMs}), got ${other.offsetMs}`,
      );
    }
  });
}

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Spaces, tabs, CRs and LFs around a payload (a shell's trailing newline); the helper strips exactly these. */
const SURROUNDING_SPACE = /^[ \t\r\n]+|[ \t\r\n]+$/g;

/**
 * Strict base64 (standard alphabet, padded, surrounding spaces, tabs and newlines ignored) → UTF-8
 * (a byte order mark is not skipped) → strict JSON → validate. Never throws. The helper
 * (TouchPlanParser.java) answers every payload of test/fixtures/touch-plans.json as this does.
 */
export function decodeTouchPlanBase64(b64: string): TouchPlanValidation {
  const text = b64.replace(SURROUNDING_SPACE, '');
  if (text.length === 0) return { valid: false, errors: [{ path: '', message: 'payloadBase64 is empty' }] };
  if (!BASE64_RE.test(text)) {
    return { valid: false, errors: [{ path: '', message: 'payloadBase64 is not valid base64' }] };
  }
  const bytes = Buffer.from(text, 'base64');
  let json: string;
  try {
    json = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { valid: false, errors: [{ path: '', message: 'payloadBase64 does not decode to UTF-8 text' }] };
  }
  let value: unknown;
  try {
    value = parseStrictJson(json);
  } catch (err) {
    return {
      valid: false,
      errors: [
        {
          path: '',
          message: `payload is not valid JSON: ${err instanceof Error ? err.message.replace(/^JSON: /, '') : String(err)}`,
        },
      ],
    };
  }
  return validateTouchPlan(value);
}

/** JSON with `protocol` first, base64 (standard alphabet, padded). */
export function encodeTouchPlanBase64(plan: TouchPlan): string {
  return Buffer.from(JSON.stringify(touchPlanToJson(plan)), 'utf8').toString('base64');
}

/** The wire object of a plan: `{protocol, kind, durationMs, pointers}`. */
export function touchPlanToJson(plan: TouchPlan): Record<string, unknown> {
  return {
    protocol: TOUCH_PLAN_PROTOCOL,
    kind: plan.kind,
    durationMs: plan.durationMs,
    pointers: plan.pointers.map((p) => ({
      pointerId: p.pointerId,
      samples: p.samples.map((s) => ({ offsetMs: s.offsetMs, x: s.x, y: s.y })),
    })),
  };
}

/** Motion events the helper injects for a plan: DOWN, MOVEs, UP (+ POINTER_DOWN/MOVE/POINTER_UP for two). */
export function countInjectedEvents(plan: TouchPlan): number {
  const samples = plan.pointers[0]?.samples.length ?? 0;
  return plan.pointers.length === 2 ? samples + 3 : samples;
}

// ---------------------------------------------------------------------------------------------
// Builders. Each throws RangeError on input it cannot turn into a valid plan (non-finite
// coordinates, durations outside 0-120000, steps < 1); everything they return validates.

/** Default tap: two samples at the same point, 50 ms apart (a 0 ms tap is valid but some views drop it). */
export const TAP_DURATION_MS = 50;
export const LONG_PRESS_DURATION_MS = 600;
export const DRAG_HOLD_MS = 600;
/** Default sampling interval of moving builders (one frame at 60 Hz), capped at MAX_DEFAULT_STEPS. */
const DEFAULT_FRAME_MS = 16;
const MAX_DEFAULT_STEPS = 240;

function coord(value: number, name: string): number {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number`);
  const rounded = Math.round(value * 100) / 100;
  if (!Number.isFinite(rounded)) return value;
  return Object.is(rounded, -0) ? 0 : rounded;
}

function duration(value: number, name = 'durationMs'): number {
  if (!Number.isInteger(value) || value < 0 || value > TOUCH_PLAN_MAX_DURATION_MS) {
    throw new RangeError(`${name} must be an integer, 0-${TOUCH_PLAN_MAX_DURATION_MS}`);
  }
  return value;
}

/**
 * Offsets for `steps` segments over `durationMs`: `steps + 1` values from 0 to durationMs, strictly
 * increasing. With durationMs 0 it is `[0, 0]` (equal offsets are allowed only then). `steps` is
 * clamped to durationMs so that rounding cannot produce equal neighbours.
 */
function offsets(durationMs: number, steps: number | undefined): number[] {
  if (steps !== undefined && (!Number.isInteger(steps) || steps < 1)) {
    throw new RangeError('steps must be an integer ≥ 1');
  }
  if (durationMs === 0) return [0, 0];
  const wanted = steps ?? Math.min(MAX_DEFAULT_STEPS, Math.max(1, Math.round(durationMs / DEFAULT_FRAME_MS)));
  const n = Math.min(wanted, durationMs);
  const out: number[] = [];
  for (let i = 0; i <= n; i += 1) out.push(i === n ? durationMs : Math.round((i * durationMs) / n));
  return out;
}

function point(p: Point, name: string): Point {
  return { x: coord(p.x, `${name}.x`), y: coord(p.y, `${name}.y`) };
}

function swipePlan(durationMs: number, samples: TouchSample[]): TouchPlan {
  return { kind: 'swipe', durationMs, pointers: [{ pointerId: 0, samples }] };
}

export function buildTap(x: number, y: number): TouchPlan {
  const p = point({ x, y }, 'point');
  return swipePlan(TAP_DURATION_MS, [
    { offsetMs: 0, ...p },
    { offsetMs: TAP_DURATION_MS, ...p },
  ]);
}

export function buildLongPress(x: number, y: number, durationMs = LONG_PRESS_DURATION_MS): TouchPlan {
  const d = duration(durationMs);
  const p = point({ x, y }, 'point');
  return swipePlan(d, [
    { offsetMs: 0, ...p },
    { offsetMs: d, ...p },
  ]);
}

function lerp(a: number, b: number, t: number): number {
  return a + (b - a) * t;
}

export function buildSwipe(from: Point, to: Point, durationMs: number, steps?: number): TouchPlan {
  const d = duration(durationMs);
  const a = point(from, 'from');
  const b = point(to, 'to');
  const offs = offsets(d, steps);
  const last = offs.length - 1;
  return swipePlan(
    d,
    offs.map((offsetMs, i) => ({
      offsetMs,
      x: coord(lerp(a.x, b.x, i / last), 'x'),
      y: coord(lerp(a.y, b.y, i / last), 'y'),
    })),
  );
}

/** Press and hold at `from` for `holdMs`, then move to `to` over `moveDurationMs`; total = hold + move. */
export function buildDrag(
  from: Point,
  to: Point,
  moveDurationMs: number,
  holdMs = DRAG_HOLD_MS,
  steps?: number,
): TouchPlan {
  const move = duration(moveDurationMs, 'moveDurationMs');
  const hold = duration(holdMs, 'holdMs');
  const total = duration(hold + move, 'holdMs + moveDurationMs');
  const a = point(from, 'from');
  const b = point(to, 'to');
  if (total === 0)
    return swipePlan(0, [
      { offsetMs: 0, ...a },
      { offsetMs: 0, ...b },
    ]);
  const samples: TouchSample[] = [{ offsetMs: 0, ...a }];
  if (hold > 0) samples.push({ offsetMs: hold, ...a });
  if (move > 0) {
    const offs = offsets(move, steps);
    const last = offs.length - 1;
    for (let i = 1; i <= last; i += 1) {
      samples.push({
        offsetMs: hold + (offs[i] as number),
        x: coord(lerp(a.x, b.x, i / last), 'x'),
        y: coord(lerp(a.y, b.y, i / last), 'y'),
      });
    }
  } else {
    // No move time: the last sample jumps to `to` at the end of the hold.
    samples[samples.length - 1] = { offsetMs: hold, ...b };
  }
  return swipePlan(total, samples);
}

function transformPlan(
  durationMs: number,
  steps: number | undefined,
  at: (t: number) => [Point, Point],
): TouchPlan {
  const offs = offsets(durationMs, steps);
  const last = offs.length - 1;
  const first: TouchSample[] = [];
  const second: TouchSample[] = [];
  offs.forEach((offsetMs, i) => {
    const [p0, p1] = at(i / last);
    first.push({ offsetMs, x: coord(p0.x, 'x'), y: coord(p0.y, 'y') });
    second.push({ offsetMs, x: coord(p1.x, 'x'), y: coord(p1.y, 'y') });
  });
  return {
    kind: 'transform',
    durationMs,
    pointers: [
      { pointerId: 0, samples: first },
      { pointerId: 1, samples: second },
    ],
  };
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite number ≥ 0`);
  return value;
}

/**
 * Two fingers on a line through `center` at `angleDeg` (0 = horizontal), `startDistance` apart at
 * the start and `endDistance` apart at the end (pinch in when it shrinks, out when it grows).
 */
export function buildPinch(
  center: Point,
  startDistance: number,
  endDistance: number,
  durationMs: number,
  angleDeg = 0,
  steps?: number,
): TouchPlan {
  const d = duration(durationMs);
  const c = point(center, 'center');
  const s = nonNegative(startDistance, 'startDistance');
  const e = nonNegative(endDistance, 'endDistance');
  if (!Number.isFinite(angleDeg)) throw new RangeError('angleDeg must be a finite number');
  const rad = (angleDeg * Math.PI) / 180;
  const ux = Math.cos(rad);
  const uy = Math.sin(rad);
  return transformPlan(d, steps, (t) => {
    const half = lerp(s, e, t) / 2;
    return [
      { x: c.x - ux * half, y: c.y - uy * half },
      { x: c.x + ux * half, y: c.y + uy * half },
    ];
  });
}

/** Two fingers opposite each other on a circle of `radius` around `center`, turning from start to end angle. */
export function buildRotate(
  center: Point,
  radius: number,
  startAngleDeg: number,
  endAngleDeg: number,
  durationMs: number,
  steps?: number,
): TouchPlan {
  const d = duration(durationMs);
  const c = point(center, 'center');
  const r = nonNegative(radius, 'radius');
  if (!Number.isFinite(startAngleDeg) || !Number.isFinite(endAngleDeg)) {
    throw new RangeError('angles must be finite numbers');
  }
  return transformPlan(d, steps, (t) => {
    const rad = (lerp(startAngleDeg, endAngleDeg, t) * Math.PI) / 180;
    const dx = Math.cos(rad) * r;
    const dy = Math.sin(rad) * r;
    return [
      { x: c.x + dx, y: c.y + dy },
      { x: c.x - dx, y: c.y - dy },
    ];
  });
}
