/**
 * The strictly parsed JSON body is what the route's validator reads: `c.req.json()` after `readJson`
 * answers that value itself. Hono's `json()` reads its "text" cache, so a body cached only as "json"
 * was stringified again, wrapped in a new web Response and parsed a second time on every request
 * (~4 % of the bridge's CPU per snapshot call).
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { jsonBody, readJson } from '../../src/server/middleware/guard.ts';

describe('readJson hands the parsed body to the validator', () => {
  it('c.req.json() answers the strictly parsed value, the same object on every call, without a new Response', async () => {
    const app = new Hono();
    let constructed = 0;
    const Original = globalThis.Response;
    app.post('/x', async (c) => {
      await readJson(c as never, jsonBody(1024));
      globalThis.Response = class extends Original {
        constructor(...args: ConstructorParameters<typeof Response>) {
          super(...args);
          constructed++;
        }
      } as typeof Response;
      try {
        const first = (await c.req.json()) as { a: number[] };
        const second = await c.req.json();
        return Original.json({ same: first === second, a: first.a, constructed });
      } finally {
        globalThis.Response = Original;
      }
    });
    const res = await app.request('/x', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":[1,2,3]}',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ same: true, a: [1, 2, 3], constructed: 0 });
  });
});
