/**
 * Device labels, provider names and selectors (pure validation of outside input). Label keys and
 * values match `[A-Za-z0-9._/-]{1,63}`; at most 16 labels per device.
 */
import { BridgeError, type FieldError, invalidArgument } from '../errors.ts';
import { describeValue } from '../manifest/describe-value.ts';

export const LABEL_PATTERN = /^[A-Za-z0-9._/-]{1,63}$/;
export const MAX_LABELS = 16;

/** Validate a labels object; resolves a fresh plain object or throws INVALID_ARGUMENT naming each bad field. */
export function validateLabels(input: unknown, field = 'labels'): Record<string, string> {
  if (input === undefined) return {};
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidArgument(`${field} must be an object of string values`, [
      { path: field, message: 'must be an object' },
    ]);
  }
  const entries = Object.entries(input as Record<string, unknown>);
  const errors: FieldError[] = [];
  if (entries.length > MAX_LABELS) {
    errors.push({ path: field, message: `at most ${MAX_LABELS} labels (got ${entries.length})` });
  }
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (!LABEL_PATTERN.test(key)) {
      errors.push({ path: `${field}.${key.slice(0, 80)}`, message: 'key must match [A-Za-z0-9._/-]{1,63}' });
      continue;
    }
    if (typeof value !== 'string' || !LABEL_PATTERN.test(value)) {
      errors.push({
        path: `${field}.${key}`,
        message: `value ${describeValue(value)} must be a string matching [A-Za-z0-9._/-]{1,63}`,
      });
      continue;
    }
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  if (errors.length > 0) {
    throw invalidArgument(
      `invalid ${field}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      errors,
    );
  }
  return out;
}

/** A provider name: the same character rules as a label value. */
export function validateProvider(input: unknown, field = 'provider'): string | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== 'string' || !LABEL_PATTERN.test(input)) {
    throw invalidArgument(`${field} ${describeValue(input)} must match [A-Za-z0-9._/-]{1,63}`, [
      { path: field, message: 'must match [A-Za-z0-9._/-]{1,63}' },
    ]);
  }
  return input;
}

export interface DeviceSelector {
  deviceId?: string;
  labels?: Record<string, string>;
  sdkMin?: number;
  sdkMax?: number;
}

/** Validate a device selector (labels as above, sdk bounds integers 1..1000, deviceId a string). */
export function validateSelector(input: unknown): DeviceSelector {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidArgument('selector must be an object', [{ path: 'selector', message: 'must be an object' }]);
  }
  const raw = input as Record<string, unknown>;
  const out: DeviceSelector = {};
  if (raw['deviceId'] !== undefined) {
    if (typeof raw['deviceId'] !== 'string' || raw['deviceId'].length === 0 || raw['deviceId'].length > 128) {
      throw invalidArgument('selector.deviceId must be a non-empty string', [
        { path: 'selector.deviceId', message: 'must be a non-empty string of at most 128 characters' },
      ]);
    }
    out.deviceId = raw['deviceId'];
  }
  if (raw['labels'] !== undefined) out.labels = validateLabels(raw['labels'], 'selector.labels');
  for (const key of ['sdkMin', 'sdkMax'] as const) {
    const value = raw[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 1000) {
      throw invalidArgument(`selector.${key} must be an integer between 1 and 1000`, [
        { path: `selector.${key}`, message: 'must be an integer between 1 and 1000' },
      ]);
    }
    out[key] = value;
  }
  if (out.sdkMin !== undefined && out.sdkMax !== undefined && out.sdkMin > out.sdkMax) {
    throw new BridgeError('INVALID_ARGUMENT', `selector.sdkMin ${out.sdkMin} is above sdkMax ${out.sdkMax}`, {
      details: { errors: [{ path: 'selector.sdkMin', message: 'must not exceed sdkMax' }] },
    });
  }
  return out;
}
