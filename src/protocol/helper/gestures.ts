/**
 * Named gestures → `android-touch-plan-v1` plans (pure). One mapping for the HTTP API and the CLI;
 * impossible values (a zero radius, a negative duration) are INVALID_ARGUMENT naming the gesture.
 */
import { BridgeError } from '../../errors.ts';
import {
  buildDrag,
  buildLongPress,
  buildPinch,
  buildRotate,
  buildSwipe,
  buildTap,
  type Point,
  type TouchPlan,
} from './touch-plan.ts';

export type GestureSpec =
  | { kind: 'tap'; x: number; y: number }
  | { kind: 'long-press'; x: number; y: number; durationMs?: number }
  | { kind: 'swipe' | 'drag'; from: Point; to: Point; durationMs?: number }
  | { kind: 'pinch'; center: Point; startDistance: number; endDistance: number; durationMs?: number }
  | {
      kind: 'rotate';
      center: Point;
      radius: number;
      startAngle: number;
      endAngle: number;
      durationMs?: number;
    }
  /** A raw plan, validated by whoever injects it. */
  | { kind: 'plan'; plan: unknown };

export const DEFAULT_SWIPE_MS = 300;
export const DEFAULT_DRAG_MS = 400;
export const DEFAULT_TRANSFORM_MS = 300;

export function planForGesture(spec: GestureSpec): TouchPlan | unknown {
  try {
    switch (spec.kind) {
      case 'tap':
        return buildTap(spec.x, spec.y);
      case 'long-press':
        return buildLongPress(spec.x, spec.y, spec.durationMs);
      case 'swipe':
        return buildSwipe(spec.from, spec.to, spec.durationMs ?? DEFAULT_SWIPE_MS);
      case 'drag':
        return buildDrag(spec.from, spec.to, spec.durationMs ?? DEFAULT_DRAG_MS);
      case 'pinch':
        return buildPinch(
          spec.center,
          spec.startDistance,
          spec.endDistance,
          spec.durationMs ?? DEFAULT_TRANSFORM_MS,
        );
      case 'rotate':
        return buildRotate(
          spec.center,
          spec.radius,
          spec.startAngle,
          spec.endAngle,
          spec.durationMs ?? DEFAULT_TRANSFORM_MS,
        );
      case 'plan':
        return spec.plan;
    }
  } catch (err) {
    if (err instanceof RangeError)
      throw new BridgeError('INVALID_ARGUMENT', `invalid ${spec.kind}: ${err.message}`);
    throw err;
  }
}

/** CLI words (`tap 10 20`, `swipe X1 Y1 X2 Y2`, …) → a gesture spec; errors name the problem. */
export function gestureFromWords(kind: string, numbers: number[], durationMs?: number): GestureSpec {
  const need = (n: number) => {
    if (numbers.length !== n) {
      throw new BridgeError('INVALID_ARGUMENT', `${kind} takes ${n} numbers, got ${numbers.length}`);
    }
  };
  const d = durationMs === undefined ? {} : { durationMs };
  const [a = 0, b = 0, c = 0, e = 0, f = 0] = numbers;
  switch (kind) {
    case 'tap':
      need(2);
      return { kind, x: a, y: b };
    case 'long-press':
      need(2);
      return { kind, x: a, y: b, ...d };
    case 'swipe':
    case 'drag':
      need(4);
      return { kind, from: { x: a, y: b }, to: { x: c, y: e }, ...d };
    case 'pinch':
      need(4);
      return { kind, center: { x: a, y: b }, startDistance: c, endDistance: e, ...d };
    case 'rotate':
      need(5);
      return { kind, center: { x: a, y: b }, radius: c, startAngle: e, endAngle: f, ...d };
    default:
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `unknown gesture ${JSON.stringify(kind)}: tap, long-press, swipe, drag, pinch, rotate or plan`,
      );
  }
}
