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
});
