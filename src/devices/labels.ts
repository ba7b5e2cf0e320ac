/**
 * The name rules of devices (pure validation of outside input), each defined once and imported
 * everywhere: device ids match `[A-Za-z0-9][A-Za-z0-9._-]{0,127}` (`DeviceIdSchema`, also the route parameter);
 * label keys and values, provider and helper names match `[A-Za-z0-9._/-]{1,63}`; at most 16 labels
 * per device. The selector that uses them is `selector.ts`.
 */
import { z } from 'zod';
import { describeValue } from '../describe-value.ts';
import { type FieldError, invalidArgument } from '../errors.ts';

export const LABEL_PATTERN = /^[A-Za-z0-9._/-]{1,63}$/;
export const MAX_LABELS = 16;
/** What a device id may look like: URL-path safe, starts with a letter or digit, at most 128 chars. */
export const DEVICE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const DEVICE_ID_RULE = 'a letter or digit, then [A-Za-z0-9._-], at most 128 characters';

/** A device id: the one rule for selectors, route parameters and the ids `deviceIdFor` derives. */
export const DeviceIdSchema = z.string().regex(DEVICE_ID_PATTERN, `must be a device id (${DEVICE_ID_RULE})`);

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
