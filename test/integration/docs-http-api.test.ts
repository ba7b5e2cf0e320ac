/**
 * docs/http-api.md is generated from the OpenAPI document the bridge serves (scripts/http-api-doc.ts,
 * `npm run docs:api`): the page on disk must be what the generator writes now, and the document must
 * declare for every operation who may call it, which the page renders.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { currentHttpApiPage, HTTP_API_PAGE, servedDocument } from '../../scripts/http-api-doc.ts';

describe('docs/http-api.md', () => {
  it('is current with the served OpenAPI document', async () => {
    const expected = await currentHttpApiPage();
    const actual = await readFile(HTTP_API_PAGE, 'utf8');
    // The first differing line, not a 60 KB diff.
    const want = expected.split('\n');
    const have = actual.split('\n');
    const at = want.findIndex((line, i) => line !== have[i]);
    const where =
      at === -1
        ? `${have.length - want.length} extra lines at the end`
        : `line ${at + 1}: ${JSON.stringify(have[at])}`;
    expect(
      actual === expected,
      `docs/http-api.md is not current (${where}, expected ${JSON.stringify(want[at])}); run \`npm run docs:api\``,
    ).toBe(true);
  });

  it('renders the same page twice (no dates, no machine-dependent values)', async () => {
    expect(await currentHttpApiPage()).toBe(await currentHttpApiPage());
  });

  it("declares each operation's access, consistent with its security", async () => {
    const doc = await servedDocument();
    const undeclared: string[] = [];
    for (const [route, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${route}`;
        const access = op['x-access'];
        if (!['anyone', 'client', 'admin', 'admin-when-tokens'].includes(access ?? ''))
          undeclared.push(where);
        // No token needed exactly when the operation asks for no bearer scheme.
        expect(access === 'anyone', where).toBe((op.security ?? []).length === 0);
      }
    }
    expect(undeclared).toEqual([]);
    expect(doc.paths['/v1/leases/{id}/shell']?.['post']?.['x-capability']).toBe('shell');
    expect(doc.paths['/v1/leases/{id}/adb']?.['post']?.['x-capability']).toBe('adb');
    expect(doc.paths['/v1/devices']?.['post']?.['x-access']).toBe('admin');
    expect(doc.paths['/v1/leases/{id}/snapshot']?.['post']?.['x-rate-limited']).toBe('expensive');
  });
});
