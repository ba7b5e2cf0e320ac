/** Store wrappers that count every call by method name (a witness of how often a request reads state). */
import type { DeviceStore } from '../../src/devices/types.ts';
import type { LeaseStore } from '../../src/leases/types.ts';

export interface Counted<T> {
  store: T;
  calls: Map<string, number>;
  reset(): void;
  count(method: string): number;
}

function counting<T extends object>(inner: T): Counted<T> {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls, reset: () => calls.clear(), count: (m) => calls.get(m) ?? 0 };
}

export const countingLeaseStore = (inner: LeaseStore): Counted<LeaseStore> => counting(inner);
export const countingDeviceStore = (inner: DeviceStore): Counted<DeviceStore> => counting(inner);
