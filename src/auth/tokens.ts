/**
 * Bearer-token authentication. Tokens are configured as sha256 hashes (never the token itself) in
 * a JSON file: `[{"name","tenant","role":"admin"|"client","sha256":"<hex of the token>",
 * "capabilities"?:["shell","adb"],"quota"?:{"leases","waiters","adbEndpoints"}}]`. A capability is a
 * power an operator grants a client token on top of its role (admins hold every capability). A quota
 * is its tenant's (every entry of a tenant that gives one must give the same); a tenant without one
 * has DEFAULT_TENANT_QUOTA. With no tokens configured the bridge is loopback-only and every loopback
 * caller is an admin.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isLoopbackHost } from '../config.ts';
import { BridgeError, isBridgeError } from '../errors.ts';
import { parseStrictJson } from '../strict-json.ts';

export type Role = 'admin' | 'client';

/** Powers an operator grants a client token on top of its role (admins hold them all). */
export const CAPABILITIES = ['shell', 'adb'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** What each capability lets a token do, in words for people (API answers, the console, docs). */
export const CAPABILITY_MEANINGS: Readonly<Record<Capability, string>> = {
  shell: 'run one shell command at a time on a leased device, as the shell user',
  adb: 'open a remote adb endpoint on a leased device: a full shell as the shell user, with any install flags',
};

export interface Principal {
  name: string;
  tenant: string;
  role: Role;
  /** What the token was granted besides its role; absent means none. */
  capabilities?: readonly Capability[];
}

/** Whether the caller holds `capability` (admins always do). */
export function hasCapability(principal: Principal, capability: Capability): boolean {
  return principal.role === 'admin' || (principal.capabilities ?? []).includes(capability);
}

/** The capabilities the caller holds, in CAPABILITIES order (admins: every one). */
export function capabilitiesOf(principal: Principal): Capability[] {
  return CAPABILITIES.filter((c) => hasCapability(principal, c));
}

/** What one tenant may hold at once: active leases, queued waiters, open adb endpoints (per node). */
export interface TenantQuota {
  leases: number;
  waiters: number;
  adbEndpoints: number;
}

/** A tenant's quota when the tokens file gives none (without tokens there are no quotas). */
export const DEFAULT_TENANT_QUOTA: Readonly<TenantQuota> = { leases: 64, waiters: 32, adbEndpoints: 16 };

const quotaCount = z.number().int().min(0).max(100_000);
const QuotaSchema = z
  .object({ leases: quotaCount, waiters: quotaCount, adbEndpoints: quotaCount })
  .partial()
  .strict();

const TokenEntrySchema = z
  .object({
    name: z.string().min(1).max(128),
    tenant: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'tenant must match [A-Za-z0-9._-]{1,64}'),
    role: z.enum(['admin', 'client']),
    sha256: z
      .string()
      .trim()
      .regex(/^[0-9a-fA-F]{64}$/, 'sha256 must be 64 hex characters (the sha256 of the token)')
      .transform((s) => s.toLowerCase()),
    capabilities: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length).optional(),
    quota: QuotaSchema.optional(),
  })
  .strict();

const TokensFileSchema = z.array(TokenEntrySchema);

/**
 * The sha256 of a token, hex (what the tokens file holds). `createHash`, not the one-shot
 * `crypto.hash` (~1 µs cheaper per request; Node 20.12+, so every Node the package supports
 * now has it: a possible follow-up).
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * What a console session keeps to name the token it was opened with: a digest of the token's sha256
 * (the tokens file's `sha256`) under a label of its own, so the session store holds neither the
 * token nor the hash the tokens file holds. Takes that sha256 as hex.
 */
export function sessionTokenRef(tokenSha256Hex: string): string {
  return createHash('sha256')
    .update(`devicebridge console session token\n${tokenSha256Hex.toLowerCase()}`, 'utf8')
    .digest('base64url');
}

/** Whether two principals are the same: name, tenant, role and capabilities (in any order). */
export function samePrincipal(a: Principal, b: Principal): boolean {
  const caps = (p: Principal) => [...new Set(p.capabilities ?? [])].sort().join(',');
  return a.name === b.name && a.tenant === b.tenant && a.role === b.role && caps(a) === caps(b);
}

export class Authenticator {
  readonly #entries: Array<Principal & { digest: Buffer; sessionRef: Buffer }>;
  readonly #quotas = new Map<string, TenantQuota>();

  constructor(
    entries: Array<Principal & { sha256: string; quota?: Partial<TenantQuota> }>,
    source = 'tokens',
  ) {
    const givenBy = new Map<string, { index: number; quota: string }>();
    for (const [i, e] of entries.entries()) {
      if (e.quota === undefined) continue;
      const quota = { ...DEFAULT_TENANT_QUOTA, ...e.quota };
      const text = JSON.stringify(quota);
      const earlier = givenBy.get(e.tenant);
      if (earlier !== undefined && earlier.quota !== text) {
        throw new BridgeError(
          'INVALID_ARGUMENT',
          `${source}[${i}].quota: tenant ${e.tenant} already has another quota (entry ${earlier.index}); a quota is the tenant's, give the same one or one entry only`,
        );
      }
      givenBy.set(e.tenant, { index: i, quota: text });
      this.#quotas.set(e.tenant, quota);
    }
    this.#entries = entries.map((e) => ({
      name: e.name,
      tenant: e.tenant,
      role: e.role,
      ...(e.capabilities === undefined ? {} : { capabilities: [...new Set(e.capabilities)] }),
      digest: Buffer.from(e.sha256, 'hex'),
      sessionRef: Buffer.from(sessionTokenRef(e.sha256), 'base64url'),
    }));
  }

  /** Parse a tokens file's JSON text; errors name the entry index and field. */
  static fromJson(text: string, source = 'tokens file'): Authenticator {
    let raw: unknown;
    try {
      // The strict parser's messages name the rule, line, column and path, never the content: the
      // file holds secrets (token hashes), and JSON.parse's messages quote the text around an error.
      raw = parseStrictJson(text, { maxDepth: 4 });
    } catch (err) {
      const detail = isBridgeError(err) ? `: ${err.message.replace(/^JSON: /, '')}` : '';
      throw new BridgeError('INVALID_ARGUMENT', `${source}: not valid JSON${detail}`);
    }
    const parsed = TokensFileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = (issue?.path ?? [])
        .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
        .join('');
      throw new BridgeError('INVALID_ARGUMENT', `${source}${where}: ${issue?.message ?? 'invalid'}`);
    }
    const seen = new Set<string>();
    for (const [i, e] of parsed.data.entries()) {
      if (seen.has(e.sha256))
        throw new BridgeError('INVALID_ARGUMENT', `${source}[${i}]: duplicate token hash`);
      seen.add(e.sha256);
    }
    return new Authenticator(parsed.data, source);
  }

  static fromFile(path: string | undefined): Authenticator {
    if (path === undefined) return new Authenticator([]);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `DEVICEBRIDGE_TOKENS_FILE: cannot read ${path}: ${(err as Error).message}`,
      );
    }
    return Authenticator.fromJson(text, 'DEVICEBRIDGE_TOKENS_FILE');
  }

  get enabled(): boolean {
    return this.#entries.length > 0;
  }

  /**
   * What `tenant` may hold at once (the tokens file's quota, else the default); undefined without
   * tokens, where every (loopback) caller is the one tenant and there is nobody to share with.
   */
  quotaOf(tenant: string): TenantQuota | undefined {
    if (!this.enabled) return undefined;
    return this.#quotas.get(tenant) ?? { ...DEFAULT_TENANT_QUOTA };
  }

  /**
   * Resolve the caller. `authorization` is the raw header; `remoteAddress` the peer address when
   * known. Returns null for an anonymous caller (no header) when tokens are configured.
   */
  authenticate(authorization: string | undefined, remoteAddress: string | undefined): Principal | null {
    if (!this.enabled) {
      if (remoteAddress !== undefined && !isLoopbackHost(remoteAddress)) {
        throw new BridgeError(
          'UNAUTHENTICATED',
          'no tokens are configured: only loopback callers are served',
        );
      }
      return { name: 'loopback', tenant: 'local', role: 'admin' };
    }
    if (authorization === undefined || authorization === '') return null;
    // RFC 7235: the scheme name is case-insensitive ("bearer", "BEARER").
    const match = /^bearer +([\x21-\x7e]{1,512})$/i.exec(authorization);
    if (!match) throw new BridgeError('UNAUTHENTICATED', 'Authorization header must be "Bearer <token>"');
    const digest = createHash('sha256').update(match[1]!, 'utf8').digest();
    let found: Principal | null = null;
    // Compare against every entry in constant time per entry; do not stop early.
    for (const e of this.#entries) {
      if (timingSafeEqual(digest, e.digest)) found = principalOf(e);
    }
    if (found === null) throw new BridgeError('UNAUTHENTICATED', 'unknown token');
    return found;
  }

  /**
   * The principal the token a console session was opened with names now (by the session's
   * `sessionTokenRef`), or null when no configured token has that reference (revoked, or no tokens).
   */
  principalOfSession(ref: string): Principal | null {
    const given = Buffer.from(ref, 'base64url');
    let found: Principal | null = null;
    for (const e of this.#entries) {
      if (given.length === e.sessionRef.length && timingSafeEqual(given, e.sessionRef))
        found = principalOf(e);
    }
    return found;
  }
}

function principalOf(e: Principal): Principal {
  return {
    name: e.name,
    tenant: e.tenant,
    role: e.role,
    ...(e.capabilities === undefined ? {} : { capabilities: e.capabilities }),
  };
}
