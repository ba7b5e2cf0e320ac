/**
 * Console sessions: signing in exchanges a bearer token for a random session id, sent back as an
 * HttpOnly, SameSite=Strict cookie, and a CSRF token the pages put on every state-changing request
 * (`X-CSRF-Token` header, or the `csrf` field of a form). A session lives in a SessionStore under the
 * sha256 of its id (memory on one node; Redis in a fleet, so any node honours it), with the CSRF token,
 * who the token named and a reference to the token (`sessionTokenRef`: neither the token nor the
 * tokens file's hash). Every read resolves that reference against the tokens as configured now: a
 * session whose token is gone, or names another principal (role, tenant, capabilities, name), is
 * dropped. Idle sessions expire; a read re-writes the session only while it still exists, so a
 * sign-out racing a read stays signed out.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../observability/logger.ts';
import { decodeStored, isStoredRecordError } from '../stored-record.ts';
import { MemorySessionStore, type SessionStore } from './session-store.ts';
import { type Authenticator, CAPABILITIES, type Principal, samePrincipal } from './tokens.ts';

export const SESSION_COOKIE = 'devicebridge_session';
export const CSRF_HEADER = 'x-csrf-token';
/** How long a session lasts without use. */
export const SESSION_IDLE_MS = 8 * 60 * 60 * 1000;
/** A session used again within this long is not re-written (its expiry moves at most this late). */
export const SESSION_TOUCH_MS = 60 * 1000;
/** Kept for callers of the memory bound. */
export { MAX_MEMORY_SESSIONS as MAX_SESSIONS } from './session-store.ts';

export interface ConsoleSession {
  id: string;
  csrf: string;
  principal: Principal;
  /** `sessionTokenRef` of the token the session was opened with. */
  tokenRef: string;
  lastUsed: number;
}

/** The tokens as configured now: who the token a session was opened with names (null: revoked). */
export type SessionTokens = Pick<Authenticator, 'principalOfSession'>;

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
/** A sessionTokenRef: a base64url sha256. */
const TOKEN_REF = /^[A-Za-z0-9_-]{43}$/;

/** Whether a cookie value has the shape of a session id (checked before any lookup or forward). */
export const isSessionId = (value: string | undefined): value is string =>
  value !== undefined && SESSION_ID.test(value);

/** A stored session as read back (from Redis: outside input, checked before it is trusted). */
const StoredSession = z
  .object({
    csrf: z.string().regex(SESSION_ID),
    principal: z
      .object({
        name: z.string().min(1),
        tenant: z.string().min(1),
        role: z.enum(['admin', 'client']),
        capabilities: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length).optional(),
      })
      .strict(),
    tokenRef: z.string().regex(TOKEN_REF),
    lastUsed: z.number().finite(),
  })
  .strict();

/** The store key of a session id: its sha256 (a leaked store holds no usable cookie). */
export const sessionKey = (id: string): string => createHash('sha256').update(id).digest('base64url');

export class ConsoleSessions {
  readonly #store: SessionStore;
  readonly #now: () => number;

  constructor(options: { store?: SessionStore; now?: () => number } | (() => number) = {}) {
    const o = typeof options === 'function' ? { now: options } : options;
    this.#now = o.now ?? Date.now;
    this.#store = o.store ?? new MemorySessionStore({ now: this.#now });
  }

  /** A new session for `principal`, opened with the token whose `sessionTokenRef` is `tokenRef`. */
  async create(principal: Principal, tokenRef: string): Promise<ConsoleSession> {
    if (!TOKEN_REF.test(tokenRef)) throw new TypeError('tokenRef must be a sessionTokenRef');
    const session: ConsoleSession = {
      id: randomBytes(32).toString('base64url'),
      csrf: randomBytes(32).toString('base64url'),
      principal: {
        name: principal.name,
        tenant: principal.tenant,
        role: principal.role,
        ...(principal.capabilities === undefined ? {} : { capabilities: [...principal.capabilities] }),
      },
      tokenRef,
      lastUsed: this.#now(),
    };
    await this.#store.set(sessionKey(session.id), record(session), SESSION_IDLE_MS);
    return session;
  }

  /**
   * The live session of a cookie value, refreshed; undefined when unknown, malformed, idle too long,
   * or when `tokens` no longer name the session's principal by its token (then it is dropped too).
   */
  async get(id: string | undefined, tokens: SessionTokens): Promise<ConsoleSession | undefined> {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const key = sessionKey(id);
    const raw = await this.#store.get(key);
    if (raw === null) return undefined;
    let stored: z.infer<typeof StoredSession>;
    try {
      stored = decodeStored(StoredSession, raw, { kind: 'console session' });
    } catch (err) {
      if (!isStoredRecordError(err)) throw err;
      // Unreadable (another version, or tampered with): not a session.
      await this.#store.delete(key);
      return undefined;
    }
    const now = this.#now();
    if (now - stored.lastUsed > SESSION_IDLE_MS) {
      await this.#store.delete(key);
      return undefined;
    }
    // The token as configured now (a restart or another node may have another tokens file).
    const current = tokens.principalOfSession(stored.tokenRef);
    if (current === null || !samePrincipal(current, stored.principal)) {
      await this.#store.delete(key);
      return undefined;
    }
    const session: ConsoleSession = { id, ...stored };
    if (now - stored.lastUsed >= SESSION_TOUCH_MS) {
      session.lastUsed = now;
      // Only while it still exists: a sign-out between the read above and this write stays.
      if (!(await this.#store.touch(key, record(session), SESSION_IDLE_MS))) return undefined;
    }
    return session;
  }

  async delete(id: string): Promise<void> {
    if (SESSION_ID.test(id)) await this.#store.delete(sessionKey(id));
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}

/** The stored form of a session (its id is the key's preimage, never stored). */
function record(session: ConsoleSession): string {
  const { csrf, principal, tokenRef, lastUsed } = session;
  return JSON.stringify({ csrf, principal, tokenRef, lastUsed });
}

/** Whether `given` is the session's CSRF token (constant time). */
export function csrfMatches(session: ConsoleSession, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Methods that change state and so need the CSRF token when the caller is a console session. */
export function isUnsafeMethod(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}

/**
 * The console sessions the configuration asks for: in Redis (the lease store's URL and key prefix)
 * when REDIS_URL is set, so every node honours them; this node's memory otherwise.
 */
export async function openConsoleSessions(options: {
  redisUrl?: string | undefined;
  redisPrefix?: string;
  logger?: Logger;
}): Promise<ConsoleSessions> {
  if (options.redisUrl === undefined) return new ConsoleSessions();
  const { RedisSessionStore } = await import('./redis-session-store.ts');
  return new ConsoleSessions({
    store: new RedisSessionStore({
      url: options.redisUrl,
      prefix: options.redisPrefix ?? 'devicebridge:',
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    }),
  });
}
