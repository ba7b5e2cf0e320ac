/** Tenant quotas in the tokens file: a tenant's own, the default otherwise, and one per tenant. */
import { describe, expect, it } from 'vitest';
import { Authenticator, DEFAULT_TENANT_QUOTA } from '../../src/auth/tokens.ts';

const entry = (i: number, tenant: string, quota?: object) => ({
  name: `t${i}`,
  tenant,
  role: 'client',
  sha256: String(i).repeat(64).slice(0, 64),
  ...(quota === undefined ? {} : { quota }),
});

describe('tenant quotas in the tokens file', () => {
  it('a tenant has the quota one of its entries gives (the rest from the default); others the default', () => {
    const auth = Authenticator.fromJson(
      JSON.stringify([entry(1, 'acme', { leases: 3 }), entry(2, 'acme'), entry(3, 'globex')]),
    );
    expect(auth.quotaOf('acme')).toEqual({ ...DEFAULT_TENANT_QUOTA, leases: 3 });
    expect(auth.quotaOf('globex')).toEqual(DEFAULT_TENANT_QUOTA);
    expect(auth.quotaOf('nobody')).toEqual(DEFAULT_TENANT_QUOTA);
  });

  it('two different quotas for one tenant are refused naming the tenant and both entries', () => {
    const text = JSON.stringify([entry(1, 'acme', { leases: 3 }), entry(2, 'acme', { leases: 4 })]);
    expect(() => Authenticator.fromJson(text, 'DEVICEBRIDGE_TOKENS_FILE')).toThrow(
      /DEVICEBRIDGE_TOKENS_FILE\[1\]\.quota: tenant acme already has another quota \(entry 0\)/,
    );
    // The same quota twice is one quota.
    const same = JSON.stringify([entry(1, 'acme', { waiters: 2 }), entry(2, 'acme', { waiters: 2 })]);
    expect(Authenticator.fromJson(same).quotaOf('acme')?.waiters).toBe(2);
  });

  it('without tokens there are no quotas (one tenant, nobody to share with)', () => {
    expect(new Authenticator([]).quotaOf('local')).toBeUndefined();
  });

  it('a quota field that is not a count, or unknown, is refused naming the field', () => {
    expect(() => Authenticator.fromJson(JSON.stringify([entry(1, 'acme', { leases: -1 })]))).toThrow(
      /\[0\]\.quota\.leases/,
    );
    expect(() => Authenticator.fromJson(JSON.stringify([entry(1, 'acme', { devices: 2 })]))).toThrow(
      /\[0\]\.quota/,
    );
  });
});
