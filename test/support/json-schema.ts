/**
 * The subset of JSON Schema (OpenAPI 3.1) our served document uses, as a checker and as fast-check
 * generators of conforming values: $ref to components, type (or type arrays), enum, const,
 * properties/required/additionalProperties, items, anyOf/oneOf/allOf, pattern, min/max lengths.
 */
import fc from 'fast-check';

export type Schema = Record<string, unknown>;

export class SchemaSet {
  constructor(readonly components: Record<string, Schema>) {}

  resolve(schema: Schema): Schema {
    const ref = schema['$ref'];
    if (typeof ref !== 'string') return schema;
    const name = ref.replace('#/components/schemas/', '');
    const found = this.components[name];
    if (!found) throw new Error(`unknown $ref ${ref}`);
    return this.resolve(found);
  }

  /** Problems of `value` against `schema` (empty: it conforms), each with a JSON path. */
  check(value: unknown, schema: Schema, path = '$'): string[] {
    const s = this.resolve(schema);
    if (Array.isArray(s['allOf']))
      return (s['allOf'] as Schema[]).flatMap((sub) => this.check(value, sub, path));
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (Array.isArray(s[key])) {
        const options = s[key] as Schema[];
        if (!options.some((sub) => this.check(value, sub, path).length === 0)) {
          return [`${path}: matches none of ${key}`];
        }
        return [];
      }
    }
    if ('const' in s && value !== s['const']) return [`${path}: must be ${JSON.stringify(s['const'])}`];
    if (Array.isArray(s['enum']) && !(s['enum'] as unknown[]).includes(value)) {
      return [`${path}: must be one of ${JSON.stringify(s['enum'])}`];
    }
    const types = s['type'] === undefined ? [] : ([] as unknown[]).concat(s['type']);
    if (types.length > 0 && !types.some((t) => typeMatches(value, t as string))) {
      return [`${path}: must be ${types.join('|')} (got ${value === null ? 'null' : typeof value})`];
    }
    const problems: string[] = [];
    if (
      typeof value === 'string' &&
      typeof s['pattern'] === 'string' &&
      !new RegExp(s['pattern']).test(value)
    ) {
      problems.push(`${path}: must match ${s['pattern']}`);
    }
    if (Array.isArray(value) && s['items']) {
      value.forEach((item, i) => {
        problems.push(...this.check(item, s['items'] as Schema, `${path}[${i}]`));
      });
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const record = value as Record<string, unknown>;
      const props = (s['properties'] ?? {}) as Record<string, Schema>;
      for (const key of (s['required'] ?? []) as string[]) {
        if (!Object.hasOwn(record, key)) problems.push(`${path}.${key}: is required`);
      }
      for (const [key, v] of Object.entries(record)) {
        if (props[key]) problems.push(...this.check(v, props[key]!, `${path}.${key}`));
        else if (s['additionalProperties'] === false) problems.push(`${path}.${key}: is not allowed`);
        else if (typeof s['additionalProperties'] === 'object') {
          problems.push(...this.check(v, s['additionalProperties'] as Schema, `${path}.${key}`));
        }
      }
    }
    return problems;
  }

  /** Values that conform to `schema` (small, boundary-leaning). */
  arbitrary(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    if (Array.isArray(s['allOf'])) {
      const parts = (s['allOf'] as Schema[]).map((sub) => this.arbitrary(sub, depth));
      return fc.tuple(...parts).map((values) => Object.assign({}, ...values.filter(isObject)));
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (Array.isArray(s[key]))
        return fc.oneof(...(s[key] as Schema[]).map((sub) => this.arbitrary(sub, depth)));
    }
    if ('const' in s) return fc.constant(s['const']);
    if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]));
    const type = ([] as unknown[]).concat(s['type'] ?? 'object')[0] as string;
    switch (type) {
      case 'string':
        return s['example'] !== undefined
          ? fc.oneof(fc.constant(s['example']), fc.string({ maxLength: 24 }))
          : fc.string({ maxLength: 24 });
      case 'integer':
        return fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constantFrom(2 ** 31, -(2 ** 31), 1000));
      case 'number':
        return fc.oneof(
          fc.integer({ min: -10, max: 2000 }),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
        );
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 3
          ? fc.constant([])
          : fc.array(this.arbitrary((s['items'] ?? {}) as Schema, depth + 1), { maxLength: 3 });
      default: {
        if (depth > 3) return fc.constant({});
        const props = (s['properties'] ?? {}) as Record<string, Schema>;
        const required = new Set((s['required'] ?? []) as string[]);
        const shape: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, sub] of Object.entries(props)) shape[key] = this.arbitrary(sub, depth + 1);
        const keys = Object.keys(shape);
        if (keys.length === 0) {
          return fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 });
        }
        return fc.record(shape, { requiredKeys: keys.filter((k) => required.has(k)) });
      }
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function typeMatches(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    default:
      return typeof value === type;
  }
}
