/**
 * The served OpenAPI document passes `@redocly/cli lint` with the recommended ruleset: no errors (a
 * warning is reported, not fatal), and none at all from the rules this contract promises (an
 * operationId and security on every operation, 4xx responses documented). The locally installed
 * redocly runs on a temp copy of the document, offline (telemetry and update checks off).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE_NAMES, ERROR_CODES } from '../../src/errors.ts';
import { type TestBridge, testBridge } from '../support/bridge.ts';
import { runProcess } from '../support/cli.ts';

const REDOCLY = path.resolve(import.meta.dirname, '../../node_modules/@redocly/cli/bin/cli.js');
const PROMISED_RULES = ['operation-operationId', 'security-defined', 'operation-4xx-response'];

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ pointer?: string }>;
}

describe('OpenAPI document lint', () => {
  let bridge: TestBridge;
  let dir: string;
  beforeAll(async () => {
    bridge = await testBridge();
    dir = await mkdtemp(path.join(tmpdir(), 'devicebridge-openapi-'));
  });
  afterAll(async () => {
    await bridge?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('passes redocly lint --extends recommended with zero errors', async () => {
    const res = await bridge.app.request('/v1/openapi.json');
    expect(res.status).toBe(200);
    const file = path.join(dir, 'openapi.json');
    await writeFile(file, await res.text());

    const run = await runProcess(
      process.execPath,
      [REDOCLY, 'lint', '--extends', 'recommended', '--format', 'json', file],
      {
        cwd: dir,
        env: { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', CI: 'true' },
        timeoutMs: 30_000,
      },
    );
    const start = run.stdout.indexOf('{');
    expect(start, `redocly printed no JSON report: ${run.stdout}\n${run.stderr}`).toBeGreaterThanOrEqual(0);
    const report = JSON.parse(run.stdout.slice(start)) as { problems: Problem[] };
    const show = (p: Problem) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`;
    expect(report.problems.filter((p) => p.severity === 'error').map(show)).toEqual([]);
    expect(report.problems.filter((p) => PROMISED_RULES.includes(p.ruleId)).map(show)).toEqual([]);
    expect(run.code, run.stderr).toBe(0);
  }, 60_000);

  it('lists the error table, and every operation has an operationId, security and named schemas', async () => {
    type Op = {
      operationId?: string;
      security?: unknown[];
      responses: Record<
        string,
        { content?: Record<string, { schema?: Record<string, unknown> }> } & {
          'x-error-codes'?: string[];
        }
      >;
    };
    const doc = (await (await bridge.app.request('/v1/openapi.json')).json()) as {
      'x-error-codes': Record<string, { status: number; retryable: boolean }>;
      paths: Record<string, Record<string, Op>>;
      components: { schemas: Record<string, { properties?: Record<string, Record<string, unknown>> }> };
    };
    // The table, twice: the Error schema's code enum and the top-level x-error-codes.
    const codeSchema = doc.components.schemas['Error']?.properties?.['error'] as {
      properties: { code: { enum: string[]; description: string } };
    };
    expect(codeSchema.properties.code.enum).toEqual(ERROR_CODE_NAMES);
    for (const code of ERROR_CODE_NAMES) {
      expect(codeSchema.properties.code.description).toContain(
        `| \`${code}\` | ${ERROR_CODES[code].status} |`,
      );
      expect(doc['x-error-codes'][code]).toMatchObject({
        status: ERROR_CODES[code].status,
        retryable: ERROR_CODES[code].retryable,
      });
    }
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method} ${path}`;
        expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
        expect(ids.has(op.operationId!), where).toBe(false);
        ids.add(op.operationId!);
        expect(Array.isArray(op.security), where).toBe(true);
        for (const [status, response] of Object.entries(op.responses)) {
          const json = response.content?.['application/json']?.schema;
          if (Number(status) >= 400 && response['x-error-codes'] !== undefined) {
            expect(json, where).toEqual({ $ref: '#/components/schemas/Error' });
            expect(response['x-error-codes'].length, where).toBeGreaterThan(0);
            for (const code of response['x-error-codes']) {
              expect(ERROR_CODES[code as keyof typeof ERROR_CODES]?.status, `${where} ${code}`).toBe(
                Number(status),
              );
            }
          } else if (json !== undefined) {
            // A named component, never an anonymous record of unknowns.
            expect(json['$ref'], `${where} ${status}`).toMatch(/^#\/components\/schemas\/[A-Z]/);
          }
        }
      }
    }
    expect(ids.size).toBeGreaterThanOrEqual(22);
  });
});
