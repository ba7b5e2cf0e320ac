/** decodeStored / checkStored: the one way a stored record is read back (strict JSON + a zod schema). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkStored, decodeStored, StoredRecordError } from '../../src/stored-record.ts';

const Record = z.object({
  id: z.string().min(1),
  count: z.number().int(),
  tags: z.array(z.string()),
  owner: z.object({ name: z.string() }).optional(),
});
const ref = { kind: 'sample record', key: 'rec-1' };

/** A value that must never appear in an error: letters a record never uses elsewhere. */
const secret = fc.stringMatching(/^[QXZ]{12,24}$/);

describe('decodeStored', () => {
  it('reads back every record the schema accepts, written as JSON', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            id: fc.string({ minLength: 1 }),
            count: fc.integer(),
            tags: fc.array(fc.string()),
            owner: fc.record({ name: fc.string() }),
          },
          { requiredKeys: ['id', 'count', 'tags'] },
        ),
        (value) => {
          expect(decodeStored(Record, JSON.stringify(value), ref)).toEqual(value);
          expect(decodeStored(Record, Buffer.from(JSON.stringify(value)), ref)).toEqual(value);
        },
      ),
    );
  });

  it('any text is the schema output or a StoredRecordError naming the kind and key (INTERNAL, never another throw)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (text) => {
          let value: unknown;
          try {
            value = decodeStored(Record, text, ref);
          } catch (err) {
            expect(err).toBeInstanceOf(StoredRecordError);
            const e = err as StoredRecordError;
            expect(e.code).toBe('INTERNAL');
            expect(e.message.startsWith('sample record rec-1 cannot be read: ')).toBe(true);
            expect(e).toMatchObject({ kind: 'sample record', key: 'rec-1' });
            expect(e.field.length).toBeGreaterThan(0);
            return;
          }
          expect(Record.safeParse(value).success).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('names the first bad field and never a value: not in the message, not in the details', () => {
    const broken = fc.constantFrom(
      ['id', (s: string) => ({ id: 7, count: s, tags: [] })],
      ['count', (s: string) => ({ id: 'x', count: s, tags: [] })],
      ['tags.1', (s: string) => ({ id: 'x', count: 1, tags: ['ok', { s }] })],
      ['owner.name', (s: string) => ({ id: 'x', count: 1, tags: [], owner: { name: [s] } })],
      ['the record', (s: string) => [s]],
      ['JSON', (s: string) => `${s}`],
    );
    fc.assert(
      fc.property(broken, secret, ([field, make], s) => {
        const value = make(s);
        const text = typeof value === 'string' ? `{"id": ${value}` : JSON.stringify(value);
        let err: unknown;
        try {
          decodeStored(Record, text, ref);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(StoredRecordError);
        expect((err as StoredRecordError).field).toBe(field);
        expect((err as StoredRecordError).message).not.toContain(s);
        expect(JSON.stringify((err as StoredRecordError).details)).not.toContain(s);
      }),
    );
  });

  it('refuses what the strict parser refuses (duplicate and prototype keys) and names a field inside a larger record', () => {
    expect(() => decodeStored(Record, '{"id":"a","id":"b","count":1,"tags":[]}', ref)).toThrow(
      /^sample record rec-1 cannot be read: not valid JSON \(duplicate key/,
    );
    expect(() => decodeStored(Record, '{"__proto__":{},"id":"a","count":1,"tags":[]}', ref)).toThrow(
      StoredRecordError,
    );
    expect(() => decodeStored(Record, '{"id":""}', { kind: 'lease', key: 'l1', at: 'selector' })).toThrow(
      'lease l1 cannot be read: selector.id is missing or invalid',
    );
    expect(() => checkStored(z.strictObject({ a: z.string() }), { a: 'x', b: 1 }, { kind: 'k' })).toThrow(
      'k cannot be read: b is missing or invalid',
    );
  });
});
