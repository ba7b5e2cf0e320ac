/**
 * The HTTP fuzz suite (issue #10), driven by the served OpenAPI document. One real `devicebridge
 * serve` process (tokens configured, one simulated device, the snapshot helper published, a lease
 * held); for every operation of /v1/openapi.json fast-check generates path and query parameters,
 * credentials, media types and bodies — valid ones from the documented schemas, boundary values and
 * hostile ones (deep nesting, duplicate and prototype keys, invalid UTF-8, oversized, wrong types) —
 * FUZZ_RUNS per operation (default 30). Properties, for every answer:
 *   - no 5xx other than typed 502/503/504 carrying the error envelope;
 *   - every error answer is the envelope, and every documented status matches its documented schema;
 *   - a served manifest passes the bridge's own validator;
 *   - an anonymous call to a route with `security` is 401, and no token ever comes back;
 * and at the end: the process is up, its peak RSS stayed under RSS_BOUND_MB, and its handler-run
 * metric shows no handler of a route with `security` ever ran for an anonymous caller.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/auth/tokens.ts';
import { ERROR_CODES } from '../../src/errors.ts';
import { validateManifest } from '../../src/manifest/index.ts';
import { ADMIN_TOKEN, CLIENT_TOKEN, fixture, OTHER_TENANT_TOKEN, tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, startCli, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';
import { type Schema, SchemaSet } from '../support/json-schema.ts';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 30);
/** The serve process's peak RSS (VmHWM) must stay under this through the whole run. */
const RSS_BOUND_MB = 400;
const TOKENS = [ADMIN_TOKEN, CLIENT_TOKEN, OTHER_TENANT_TOKEN];

interface Operation {
  method: string;
  path: string;
  security: boolean;
  parameters: Array<{ in: string; name: string; schema: Schema }>;
  body: Schema | undefined;
  responses: Record<string, { content?: Record<string, { schema?: Schema }>; 'x-error-codes'?: string[] }>;
}

interface FuzzRequest {
  pathParams: Record<string, string>;
  query: Record<string, string>;
  authorization: string | undefined;
  contentType: string | undefined;
  body: Uint8Array | string | undefined;
}

const enc = (s: string) => new TextEncoder().encode(s);
const NDJSON = 'application/x-ndjson';

/** Hostile JSON texts every JSON route gets besides schema-shaped values. */
const HOSTILE_JSON: Array<string | Uint8Array> = [
  `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  '{"a":1,"a":2}',
  '{"selector":{},"selector":{"deviceId":"x"}}',
  '{"__proto__":{"installArgs":["install","--user","0"]}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"selector":{"labels":{"__proto__":"x"}}}',
  'not json',
  '',
  '{',
  'null',
  '[]',
  '"str"',
  '1e400',
  new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
  `{"pad":"${'x'.repeat(300 * 1024)}"}`,
];

const HOSTILE_SEGMENTS = [
  '..',
  '%2E%2E',
  '..%2F..%2Fetc',
  'a..b',
  '%00',
  'UPPER',
  '-',
  '__proto__',
  'constructor',
  'x'.repeat(300),
  '%F0%9F%92%A9',
  '%FF',
];

describe('HTTP fuzz against a running serve (OpenAPI-driven)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let child: Awaited<ReturnType<typeof startCli>>['child'];
  let url: string;
  let doc: {
    paths: Record<string, Record<string, Record<string, unknown>>>;
    components: { schemas: Record<string, Schema> };
  };
  let schemas: SchemaSet;
  const samples: Record<string, string[]> = {};
  const statuses = new Map<string, number>();
  let requests = 0;

  beforeAll(async () => {
    tmp = await tempDir('devicebridge-fuzz-');
    const tokensFile = path.join(tmp.dir, 'tokens.json');
    await writeFile(
      tokensFile,
      JSON.stringify([
        { name: 'ops', tenant: 'acme', role: 'admin', sha256: hashToken(ADMIN_TOKEN) },
        { name: 'ci', tenant: 'acme', role: 'client', sha256: hashToken(CLIENT_TOKEN) },
        { name: 'other', tenant: 'globex', role: 'client', sha256: hashToken(OTHER_TENANT_TOKEN) },
      ]),
    );
    await publishFixtureHelper(tmp.dir);
    const started = await startCli(
      ['serve', '--port', '0', '--data-dir', tmp.dir, '--simulate', '1', '--json'],
      {
        env: {
          DEVICEBRIDGE_TOKENS_FILE: tokensFile,
          DEVICEBRIDGE_ADB_PORT: String(await freePort()),
          DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000',
          // The limits themselves are tested elsewhere; here every generated call must reach the guard.
          DEVICEBRIDGE_RATE_AUTH_FAILURES: '0',
          DEVICEBRIDGE_RATE_EXPENSIVE: '0',
          LOG_LEVEL: 'silent',
        },
        timeoutMs: 60_000,
      },
    );
    child = started.child;
    url = (JSON.parse(started.firstLine) as { url: string }).url;
    doc = (await (await fetch(`${url}/v1/openapi.json`)).json()) as typeof doc;
    schemas = new SchemaSet(doc.components.schemas);

    const auth = (t: string) => ({ Authorization: `Bearer ${t}` });
    const devices = (await (await fetch(`${url}/v1/devices`, { headers: auth(ADMIN_TOKEN) })).json()) as {
      devices: Array<{ id: string }>;
    };
    const lease = (await (
      await fetch(`${url}/v1/leases`, {
        method: 'POST',
        headers: { ...auth(CLIENT_TOKEN), 'Content-Type': 'application/json' },
        body: JSON.stringify({ selector: {}, waitSeconds: 10, ttlSeconds: 600 }),
      })
    ).json()) as { id: string };
    const manifest = (await (await fetch(`${url}/v1/helpers/android-snapshot-helper/manifest`)).json()) as {
      sha256: string;
    };
    samples['id'] = [lease.id, ...devices.devices.map((d) => d.id)];
    samples['name'] = ['android-snapshot-helper', 'other-helper'];
    samples['version'] = ['0.2.0', '9.9.9'];
    samples['sha256'] = [manifest.sha256, manifest.sha256.toUpperCase(), '0'.repeat(64)];
    expect(lease.id).toMatch(/^[A-Za-z0-9_-]+$/);
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await waitForExit(child, 20_000).catch(() => child.kill('SIGKILL'));
    }
    await tmp?.cleanup();
  });

  function operations(): Operation[] {
    const out: Operation[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const content = (op['requestBody'] as { content?: Record<string, { schema?: Schema }> } | undefined)
          ?.content;
        out.push({
          method: method.toUpperCase(),
          path: p,
          security: Array.isArray(op['security']) && (op['security'] as unknown[]).length > 0,
          parameters: (op['parameters'] ?? []) as Operation['parameters'],
          body: content?.['application/json']?.schema,
          responses: op['responses'] as Operation['responses'],
        });
      }
    }
    // Destructive calls (release, forget a device) last, so the others still find the lease and device.
    const rank = (o: Operation) => (o.method === 'DELETE' ? 2 : o.method === 'GET' ? 0 : 1);
    return out.sort((a, b) => rank(a) - rank(b));
  }

  function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
    const pathParams: Record<string, fc.Arbitrary<string>> = {};
    const query: Record<string, fc.Arbitrary<string | undefined>> = {};
    for (const param of op.parameters) {
      const known = samples[param.name] ?? [];
      const schema = param.schema;
      const valid = Array.isArray(schema['enum'])
        ? fc.constantFrom(...(schema['enum'] as string[]))
        : fc.constantFrom(...(known.length > 0 ? known : [String(schema['example'] ?? 'x')]));
      if (param.in === 'path') {
        pathParams[param.name] = fc.oneof(
          { arbitrary: valid, weight: 4 },
          { arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS), weight: 2 },
          { arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent), weight: 1 },
        );
      } else if (param.in === 'query') {
        query[param.name] = fc.option(fc.oneof(valid, fc.string({ maxLength: 40 })), { nil: undefined });
      }
    }
    // Mostly real tokens (so handlers run), often none, sometimes malformed or unknown ones.
    const authorization = fc.oneof(
      {
        arbitrary: fc.constantFrom(
          `Bearer ${ADMIN_TOKEN}`,
          `Bearer ${CLIENT_TOKEN}`,
          `bearer ${CLIENT_TOKEN}`,
        ),
        weight: 5,
      },
      { arbitrary: fc.constantFrom(`Bearer ${OTHER_TENANT_TOKEN}`), weight: 1 },
      { arbitrary: fc.constant(undefined), weight: 3 },
      {
        arbitrary: fc.constantFrom(
          'Bearer wrong-token',
          `Basic ${Buffer.from('ops:x').toString('base64')}`,
          'Bearer',
          `Bearer ${'a'.repeat(600)}`,
        ),
        weight: 1,
      },
    );
    const jsonTypes = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      undefined,
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    );
    let body: fc.Arbitrary<{ contentType: string | undefined; body: Uint8Array | string | undefined }>;
    if (op.method === 'GET' || op.method === 'HEAD') {
      body = fc.constant({ contentType: undefined, body: undefined });
    } else if (op.path.endsWith('/releases')) {
      body = fc.oneof(
        fc.constant(null).map(() => ({ contentType: 'application/vnd.android.package-archive', body: apk })),
        fc.uint8Array({ maxLength: 2048 }).map((b) => ({ contentType: 'application/octet-stream', body: b })),
        fc
          .constantFrom(...HOSTILE_JSON)
          .map((b) => ({ contentType: 'multipart/form-data; boundary=x', body: b })),
        fc.constantFrom(...HOSTILE_JSON).map((b) => ({ contentType: 'application/json', body: b })),
        fc.constant({ contentType: undefined, body: undefined }),
      );
    } else if (op.body !== undefined) {
      const shaped = schemas.arbitrary(op.body).map((v) => JSON.stringify(v));
      body = fc.record({
        contentType: jsonTypes,
        body: fc.oneof(
          { arbitrary: shaped, weight: 4 },
          { arbitrary: fc.constantFrom(...HOSTILE_JSON), weight: 3 },
          { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), weight: 1 },
          { arbitrary: fc.constant(undefined), weight: 1 },
        ),
      });
    } else {
      body = fc.oneof(
        { arbitrary: fc.constant({ contentType: undefined, body: undefined }), weight: 4 },
        {
          arbitrary: fc.record({ contentType: jsonTypes, body: fc.constantFrom(...HOSTILE_JSON) }),
          weight: 1,
        },
      );
    }
    return fc
      .record({ pathParams: fc.record(pathParams), query: fc.record(query), authorization, body })
      .map(({ pathParams, query, authorization, body }) => ({
        pathParams,
        query: Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as Record<
          string,
          string
        >,
        authorization,
        contentType: body.contentType,
        body: body.body,
      }));
  }

  let apk: Uint8Array;

  async function send(
    op: Operation,
    req: FuzzRequest,
  ): Promise<{ res: Response; text: string; target: string }> {
    let target = op.path;
    for (const [name, value] of Object.entries(req.pathParams)) {
      target = target.replace(`{${name}}`, value.includes('%') ? value : encodeURIComponent(value));
    }
    const search = new URLSearchParams(req.query).toString();
    if (search) target += `?${search}`;
    const headers: Record<string, string> = {};
    if (req.authorization !== undefined) headers['Authorization'] = req.authorization;
    if (req.contentType !== undefined) headers['Content-Type'] = req.contentType;
    requests++;
    const res = await fetch(`${url}${target}`, {
      method: op.method,
      headers,
      ...(req.body === undefined ? {} : { body: typeof req.body === 'string' ? enc(req.body) : req.body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(20_000),
    });
    if (op.method === 'HEAD') return { res, text: '', target };
    // A streamed answer (logcat, streamed shell) lasts as long as the lease or the command: read
    // what arrives within a moment, then hang up (complete lines are checked against the schema).
    if (res.status === 200 && res.headers.get('content-type')?.startsWith(NDJSON)) {
      return { res, text: await readFor(res, 1_000, 64 * 1024), target };
    }
    return { res, text: await res.text(), target };
  }

  async function readFor(res: Response, ms: number, maxBytes: number): Promise<string> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const deadline = Date.now() + ms;
    try {
      while (text.length < maxBytes) {
        const left = deadline - Date.now();
        if (left <= 0) break;
        let timer: NodeJS.Timeout | undefined;
        const next = await Promise.race([
          reader.read(),
          new Promise<'late'>((resolve) => {
            timer = setTimeout(() => resolve('late'), left);
          }),
        ]);
        clearTimeout(timer);
        if (next === 'late' || next.done) break;
        text += decoder.decode(next.value, { stream: true });
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
    return text;
  }

  function checkAnswer(op: Operation, req: FuzzRequest, res: Response, text: string, target: string): void {
    const where = `${op.method} ${target} auth=${req.authorization?.slice(0, 12)} type=${req.contentType} -> ${res.status}: ${text.slice(0, 300)}`;
    const key = `${op.method} ${op.path} ${res.status}`;
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
    expect(res.headers.get('x-request-id'), where).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    for (const token of TOKENS) expect(text, where).not.toContain(token);
    const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json');
    const body: unknown = isJson && text !== '' ? JSON.parse(text) : undefined;
    // An error is the bridge's Error, unless the operation documents another shape for that status
    // (`/mcp`: the MCP transport's JSON-RPC errors), checked against it below.
    const documentedError = op.responses[String(res.status)]?.content?.['application/json']?.schema;
    const bridgeError =
      documentedError === undefined || documentedError['$ref'] === '#/components/schemas/Error';
    if (res.status >= 400 && isJson && bridgeError) {
      const problems = schemas.check(body, { $ref: '#/components/schemas/Error' });
      expect(problems, where).toEqual([]);
      const { code } = (body as { error: { code: keyof typeof ERROR_CODES } }).error;
      expect(ERROR_CODES[code].status, where).toBe(res.status);
    }
    if (res.status >= 500) {
      expect([502, 503, 504], where).toContain(res.status);
      expect(isJson, where).toBe(true);
    }
    // (A `..` segment is resolved by the URL parser before sending: then another route, or none, answers.)
    const sent = new URL(`${url}${target}`).pathname.split('/').length;
    const reachesRoute = sent === op.path.split('/').length;
    if (op.security && req.authorization === undefined && reachesRoute) expect(res.status, where).toBe(401);
    // An error of the operation itself carries a code its documented error response names.
    if (reachesRoute && res.status >= 400 && isJson && op.responses[String(res.status)]) {
      const { code } = (body as { error: { code: string } }).error;
      const named = op.responses[String(res.status)]?.['x-error-codes'];
      if (named !== undefined) expect(named, where).toContain(code);
    }
    const streamed = op.responses[String(res.status)]?.content?.[NDJSON]?.schema;
    if (streamed !== undefined && (res.headers.get('content-type') ?? '').startsWith(NDJSON)) {
      const lines = text.split('\n').slice(0, -1);
      for (const line of lines)
        expect(schemas.check(JSON.parse(line), streamed), `${where}\n${line}`).toEqual([]);
    }
    const documented = op.responses[String(res.status)]?.content?.['application/json']?.schema;
    if (documented !== undefined && body !== undefined)
      expect(schemas.check(body, documented), where).toEqual([]);
    if (res.status === 200 && op.path.endsWith('/manifest')) {
      expect(validateManifest(body).errors, where).toEqual([]);
    }
  }

  it('every operation: typed answers only, documented shapes, valid manifests, anonymous callers stopped at the edge', async () => {
    apk = await readFile(fixture('snapshot-helper-v2.apk'));
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(20);
    for (const op of ops) {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op), async (req) => {
          const { res, text, target } = await send(op, req).catch((e: unknown) => {
            throw new Error(`${op.method} ${op.path}: ${String(e)}`, { cause: e });
          });
          checkAnswer(op, req, res, text, target);
        }),
        { numRuns: RUNS, seed: Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31) },
      );
    }

    // The process is up and answers.
    expect(child.exitCode).toBeNull();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // Its peak RSS stayed bounded.
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
    expect(peakKb / 1024).toBeLessThan(RSS_BOUND_MB);
    // No handler of a route with `security` ever ran for an anonymous caller.
    const metrics = await (
      await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    const secured = new Set(ops.filter((o) => o.security).map((o) => o.path));
    const anonymousRuns = metrics
      .split('\n')
      .filter(
        (l) => l.startsWith('devicebridge_http_handler_runs_total{') && l.includes('caller="anonymous"'),
      )
      .filter((l) => secured.has(/route="([^"]+)"/.exec(l)?.[1] ?? ''));
    expect(anonymousRuns).toEqual([]);
    // The witness works: public handlers do count anonymous callers.
    expect(metrics).toMatch(
      /devicebridge_http_handler_runs_total\{route="\/v1\/helpers\/\{name\}\/manifest",caller="anonymous"\} [1-9]/,
    );
    process.stderr.write(
      `http-fuzz: ${requests} requests over ${ops.length} operations, peak RSS ${Math.round(peakKb / 1024)} MB; ` +
        `${[...statuses.entries()].map(([k, n]) => `${k} ×${n}`).join(', ')}\n`,
    );
  }, 150_000);
});
