/**
 * The DeviceStore contract, written once and run against every store: the memory store in
 * test/unit/devices-memory-store.test.ts, the Redis store (real Redis) in
 * test/integration/devices-redis-store.test.ts. Each test builds a fresh, empty store.
 * Pure: no sockets of its own (the factory decides what the store talks to).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DeviceRecord, DeviceStore } from '../../src/devices/types.ts';

export type DeviceStoreFactory = () => Promise<DeviceStore>;

export function deviceRecord(id: string, patch: Partial<DeviceRecord> = {}): DeviceRecord {
  return {
    id,
    serial: `${id}:5555`,
    endpoint: `${id}:5555`,
    labels: { pool: 'ci' },
    state: 'online',
    properties: { sdk: 34, model: 'Sim' },
    helpers: {},
    source: 'api',
    ownerNode: 'node-a',
    consecutiveFailures: 0,
    createdAt: 1,
    updatedAt: 1,
    ...patch,
  };
}

type Op =
  | { kind: 'put'; id: string; failures: number; label: string }
  | { kind: 'update'; id: string; by: number }
  | { kind: 'delete'; id: string }
  | { kind: 'get'; id: string }
  | { kind: 'list' };

const ids = fc.constantFrom('a', 'b', 'c:1', 'd{x}', 'é', 'A');
const ops: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('put' as const),
    id: ids,
    failures: fc.nat(5),
    label: fc.string({ maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant('update' as const), id: ids, by: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('delete' as const), id: ids }),
  fc.record({ kind: fc.constant('get' as const), id: ids }),
  fc.constant({ kind: 'list' as const }),
);

export function deviceStoreContract(
  name: string,
  make: DeviceStoreFactory,
  options: { modelRuns: number },
): void {
  describe(`DeviceStore contract: ${name}`, () => {
    it('put / get / list (sorted by id, code-unit order) / delete', async () => {
      const store = await make();
      expect(await store.get('a')).toBeNull();
      expect(await store.list()).toEqual([]);
      await store.put(deviceRecord('b'));
      await store.put(deviceRecord('a', { state: 'offline' }));
      await store.put(deviceRecord('B'));
      expect(await store.get('a')).toEqual(deviceRecord('a', { state: 'offline' }));
      expect((await store.list()).map((r) => r.id)).toEqual(['B', 'a', 'b']);
      expect(await store.delete('a')).toBe(true);
      expect(await store.delete('a')).toBe(false);
      expect(await store.get('a')).toBeNull();
      expect((await store.list()).map((r) => r.id)).toEqual(['B', 'b']);
      await store.close();
    });

    it('put replaces the whole record: fields the new record lacks are gone', async () => {
      const store = await make();
      await store.put(deviceRecord('a', { state: 'quarantined', quarantineReason: 'admin' }));
      await store.put(deviceRecord('a', { state: 'online' }));
      const got = await store.get('a');
      expect(got?.state).toBe('online');
      expect(got).not.toHaveProperty('quarantineReason');
      await store.close();
    });

    it('keeps a baseline per device, copied in and out, removed with the record', async () => {
      const store = await make();
      await store.put(
        deviceRecord('a', { baseline: { capturedAt: 5, packages: 1, files: 2, settings: 3, processes: 0 } }),
      );
      expect(await store.getBaseline('a')).toBeNull();
      const baseline = {
        version: 1 as const,
        capturedAt: 5,
        packages: {
          'com.farm.app': { path: '/data/app/x/base.apk', versionCode: 3, sha256: 'b'.repeat(64) },
        },
        dirs: ['/sdcard/Download'],
        files: ['/sdcard/Download/a b.txt'],
        settings: { global: { adb_enabled: '1' }, secure: {}, system: { font_scale: '1.0' } },
        processes: [{ pid: 42, args: 'sleep 1' }],
      };
      await store.putBaseline('a', baseline);
      baseline.files.push('/changed');
      const got = await store.getBaseline('a');
      expect(got?.files).toEqual(['/sdcard/Download/a b.txt']);
      expect(got?.packages['com.farm.app']?.versionCode).toBe(3);
      got?.dirs.push('/mutated');
      expect((await store.getBaseline('a'))?.dirs).toEqual(['/sdcard/Download']);
      expect((await store.get('a'))?.baseline).toEqual({
        capturedAt: 5,
        packages: 1,
        files: 2,
        settings: 3,
        processes: 0,
      });
      expect(await store.delete('a')).toBe(true);
      expect(await store.getBaseline('a')).toBeNull();
      await store.close();
    });

    it('copies records in and out: callers cannot mutate the store', async () => {
      const store = await make();
      const r = deviceRecord('a');
      await store.put(r);
      r.labels['pool'] = 'changed';
      const got = await store.get('a');
      expect(got?.labels['pool']).toBe('ci');
      if (got) got.state = 'offline';
      const listed = (await store.list())[0];
      if (listed) listed.properties.sdk = 1;
      const updated = await store.update('a', (x) => x);
      if (updated) updated.helpers['x'] = { versionCode: 1, sha256: 'a'.repeat(64), checkedAt: 0 };
      expect(await store.get('a')).toEqual(deviceRecord('a'));
      // Every nested part, down to one helper's verdict.
      const helper = () => ({ h: { versionCode: 1, sha256: 'a'.repeat(64), checkedAt: 0 } });
      await store.put(deviceRecord('b', { helpers: helper() }));
      const b = await store.get('b');
      if (b) b.helpers['h']!.versionCode = 2;
      const bListed = (await store.list()).find((x) => x.id === 'b');
      if (bListed) bListed.helpers['h']!.checkedAt = 5;
      expect(await store.get('b')).toEqual(deviceRecord('b', { helpers: helper() }));
      await store.close();
    });

    it('update is read-modify-write and returns the new record; null (and no write) when absent', async () => {
      const store = await make();
      let called = false;
      expect(
        await store.update('nope', (r) => {
          called = true;
          return r;
        }),
      ).toBeNull();
      expect(called).toBe(false);
      expect(await store.get('nope')).toBeNull();
      await store.put(deviceRecord('a'));
      const next = await store.update('a', (r) => ({
        ...r,
        state: 'quarantined',
        quarantineReason: 'admin',
      }));
      expect(next).toEqual(deviceRecord('a', { state: 'quarantined', quarantineReason: 'admin' }));
      expect(await store.get('a')).toEqual(next);
      await store.close();
    });

    it('concurrent updates of one record lose nothing', async () => {
      const store = await make();
      await store.put(deviceRecord('hot'));
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.update('hot', (r) => ({
            ...r,
            consecutiveFailures: r.consecutiveFailures + 1,
            labels: { ...r.labels, [`l${i}`]: String(i) },
          })),
        ),
      );
      const final = await store.get('hot');
      expect(final?.consecutiveFailures).toBe(30);
      expect(Object.keys(final?.labels ?? {})).toHaveLength(31);
      await store.close();
    });

    it('update refuses an id change (INTERNAL) and a throwing change leaves the record as it was', async () => {
      const store = await make();
      await store.put(deviceRecord('a'));
      await expect(store.update('a', (r) => ({ ...r, id: 'b', state: 'offline' }))).rejects.toMatchObject({
        code: 'INTERNAL',
        message: expect.stringMatching(/must not change its id/),
      });
      await expect(
        store.update('a', () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await store.get('b')).toBeNull();
      expect(await store.get('a')).toEqual(deviceRecord('a'));
      expect((await store.list()).map((r) => r.id)).toEqual(['a']);
      await store.close();
    });

    it('generation: made once, the same for every reader, never replaced by one who knew another', async () => {
      const store = await make();
      const first = await store.generation();
      expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(first.afterLoss).toBe(false);
      expect(Number.isSafeInteger(first.since)).toBe(true);
      await store.put(deviceRecord('a'));
      await store.delete('a');
      expect(await store.generation()).toEqual(first);
      expect(await store.generation('an-id-it-never-had')).toEqual(first);
      expect(await store.generation(first.id)).toEqual(first);
      await store.close();
    });

    it('model: any sequence of put/update/delete/get/list answers like a Map', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(ops, { maxLength: 25 }), async (sequence) => {
          const store = await make();
          const model = new Map<string, DeviceRecord>();
          try {
            for (const op of sequence) {
              switch (op.kind) {
                case 'put': {
                  const record = deviceRecord(op.id, {
                    consecutiveFailures: op.failures,
                    labels: { pool: op.label },
                  });
                  await store.put(record);
                  model.set(op.id, record);
                  break;
                }
                case 'update': {
                  const change = (r: DeviceRecord): DeviceRecord => ({
                    ...r,
                    consecutiveFailures: r.consecutiveFailures + op.by,
                  });
                  const current = model.get(op.id);
                  const expected = current === undefined ? null : change(current);
                  expect(await store.update(op.id, change)).toEqual(expected);
                  if (expected) model.set(op.id, expected);
                  break;
                }
                case 'delete':
                  expect(await store.delete(op.id)).toBe(model.delete(op.id));
                  break;
                case 'get':
                  expect(await store.get(op.id)).toEqual(model.get(op.id) ?? null);
                  break;
                case 'list': {
                  const sorted = [...model.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
                  expect(await store.list()).toEqual(sorted.map((id) => model.get(id)));
                  break;
                }
              }
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: options.modelRuns },
      );
    });
  });
}
