/**
 * Console sessions: signing in exchanges a bearer token for a random session id, sent back as an
 * HttpOnly, SameSite=Strict cookie, and a CSRF token the pages put on every state-changing request
 * (`X-CSRF-Token` header, or the `csrf` field of a form). Sessions live in this node's memory
 * (bounded; a restart signs everyone out); the token itself is never stored, only who it named.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../server/auth.ts';

export const SESSION_COOKIE = 'devicebridge_session';
export const CSRF_HEADER = 'x-csrf-token';
/** How long a session lasts without use. */
export const SESSION_IDLE_MS = 8 * 60 * 60 * 1000;
/** Most sessions kept at once; the least recently used goes first. */
export const MAX_SESSIONS = 10_000;

export interface ConsoleSession {
  id: string;
  csrf: string;
  principal: Principal;
  lastUsed: number;
}

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export class ConsoleSessions {
  readonly #sessions = new Map<string, ConsoleSession>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  create(principal: Principal): ConsoleSession {
    const session = {
      id: randomBytes(32).toString('base64url'),
      csrf: randomBytes(32).toString('base64url'),
      principal: { ...principal },
      lastUsed: this.#now(),
    };
    this.#sessions.set(session.id, session);
    while (this.#sessions.size > MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value as string;
      this.#sessions.delete(oldest);
    }
    return session;
  }

  /** The live session of a cookie value, refreshed; undefined when unknown, malformed or idle too long. */
  get(id: string | undefined): ConsoleSession | undefined {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const session = this.#sessions.get(id);
    if (session === undefined) return undefined;
    if (this.#now() - session.lastUsed > SESSION_IDLE_MS) {
      this.#sessions.delete(id);
      return undefined;
    }
    session.lastUsed = this.#now();
    // Re-insert: Map order is the eviction order (least recently used first).
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    return session;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }

  get size(): number {
    return this.#sessions.size;
  }
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
