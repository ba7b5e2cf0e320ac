/**
 * `npm run docs:api`: docs/http-api.md, generated from the OpenAPI document the bridge serves.
 *
 * Builds the app in-process over a temp data directory (memory stores, no tokens, no device side,
 * no port), asks it for `GET /v1/openapi.json` and renders every operation — method, path, summary and
 * description, who may call it (`x-access`, `x-capability`, `x-rate-limited`), parameters, request
 * body fields, responses with their status and error codes — after the hand-written preamble
 * (scripts/http-api-preamble.md). The output depends on the document alone: operations sorted by tag,
 * path and method, no dates. test/integration/docs-http-api.test.ts fails when the page is not current.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Authenticator } from '../src/auth/tokens.ts';
import { loadConfig } from '../src/config.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { createApp } from '../src/server/app.ts';
import { buildServices } from '../src/server/services.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
export const HTTP_API_PAGE = path.join(ROOT, 'docs/http-api.md');
const PREAMBLE = path.join(ROOT, 'scripts/http-api-preamble.md');

// The parts of OpenAPI 3.1 this renderer reads.
interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  default?: unknown;
  example?: unknown;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface Media {
  schema?: Schema;
}
interface Response {
  description?: string;
  content?: Record<string, Media>;
  headers?: Record<string, { description?: string; schema?: Schema }>;
  'x-error-codes'?: string[];
}
interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, Media> };
  responses: Record<string, Response>;
  'x-access'?: string;
  'x-capability'?: string;
  'x-rate-limited'?: string;
}
export interface OpenApiDocument {
  info: { title: string; version: string };
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
  'x-error-codes'?: Record<string, { status: number; retryable: boolean; description: string }>;
}

/** The document as the bridge serves it: an app over a temp data dir, asked in-process. */
export async function servedDocument(): Promise<OpenApiDocument> {
  const dir = await mkdtemp(path.join(tmpdir(), 'devicebridge-docs-'));
  // A fixed environment: the document never depends on the machine that renders it.
  const config = loadConfig({ DEVICEBRIDGE_DATA_DIR: dir, LOG_LEVEL: 'silent' }, {});
  const services = buildServices(config, {
    logger: silentLogger(),
    metrics: createMetrics(),
    auth: new Authenticator([]),
  });
  try {
    const res = await createApp(services).request('/v1/openapi.json');
    if (res.status !== 200) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
    return (await res.json()) as OpenApiDocument;
  } finally {
    await services.store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replaceAll('|', '\\|');
}

const code = (text: string) => `\`${text}\``;
const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

function resolve(doc: OpenApiDocument, schema: Schema): Schema {
  if (schema.$ref === undefined) return schema;
  return doc.components?.schemas?.[refName(schema.$ref)] ?? {};
}

/** A schema's type in one short expression: `integer`, `"json" | "xml"`, `Point[]`, `map of string`. */
function typeOf(schema: Schema): string {
  if (schema.$ref !== undefined) return refName(schema.$ref);
  if (schema.enum !== undefined) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = schema.oneOf ?? schema.anyOf;
  if (union !== undefined) return union.map(typeOf).join(' | ');
  if (schema.allOf !== undefined) return schema.allOf.map(typeOf).join(' & ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length === 0) return 'any';
  return types
    .map((t) => {
      if (t === 'array') return schema.items ? `${typeOf(schema.items)}[]` : 'array';
      if (t === 'string' && schema.format === 'binary') return 'bytes';
      if (
        t === 'object' &&
        schema.properties === undefined &&
        typeof schema.additionalProperties === 'object'
      )
        return `map of ${typeOf(schema.additionalProperties)}`;
      return t;
    })
    .join(' | ');
}

/** What a schema's keywords require, in words: ranges, lengths, pattern, default. */
function constraints(schema: Schema): string[] {
  const out: string[] = [];
  const range = (lo: number | undefined, hi: number | undefined, unit: string) => {
    if (lo !== undefined && hi !== undefined) out.push(`${lo}–${hi}${unit}`);
    else if (lo !== undefined) out.push(`≥ ${lo}${unit}`);
    else if (hi !== undefined) out.push(`≤ ${hi}${unit}`);
  };
  range(schema.minimum, schema.maximum, '');
  range(schema.minLength, schema.maxLength, ' characters');
  range(schema.minItems, schema.maxItems, ' items');
  if (schema.pattern !== undefined) out.push(`pattern ${code(schema.pattern)}`);
  if (schema.default !== undefined) out.push(`default ${code(JSON.stringify(schema.default))}`);
  return out;
}

function notes(schema: Schema): string {
  const description = schema.description?.replace(/\.$/, '');
  const example = schema.example === undefined ? [] : [`e.g. ${code(String(schema.example))}`];
  return cell(
    [description, ...constraints(schema), ...example].filter((s) => s !== undefined && s !== '').join('; '),
  );
}

interface FieldRow {
  name: string;
  schema: Schema;
  required: boolean;
}

/** An object's fields, nested objects (a `$ref` to an object) expanded once with dotted names. */
function fieldsOf(doc: OpenApiDocument, schema: Schema, prefix = '', depth = 0): FieldRow[] {
  const rows: FieldRow[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const row = {
      name: `${prefix}${name}`,
      schema: property,
      required: schema.required?.includes(name) ?? false,
    };
    rows.push(row);
    const target = resolve(doc, property);
    if (property.$ref !== undefined && target.properties !== undefined && depth < 1) {
      rows.push(...fieldsOf(doc, target, `${row.name}.`, depth + 1));
    }
  }
  return rows;
}

function fieldTable(rows: FieldRow[]): string[] {
  return [
    '| field | type | required | notes |',
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${code(r.name)} | ${cell(code(typeOf(r.schema)))} | ${r.required ? 'yes' : ''} | ${notes(r.schema)} |`,
    ),
  ].map((line) => line.replace(/ +\|/g, ' |'));
}

/** `{kind: "tap", x: number, y: number, durationMs?: integer}`: one variant of a union, on one line. */
function inline(doc: OpenApiDocument, schema: Schema): string {
  const target = resolve(doc, schema);
  if (target.properties === undefined) return code(typeOf(schema));
  const fields = Object.entries(target.properties).map(([name, p]) => {
    const optional = target.required?.includes(name) ? '' : '?';
    return `${name}${optional}: ${typeOf(p)}`;
  });
  return code(`{${fields.join(', ')}}`);
}

/** A request body's schema as Markdown: a field table, or the variants of a union and their shared fields. */
function bodySchema(doc: OpenApiDocument, schema: Schema): string[] {
  const target = resolve(doc, schema);
  const name = schema.$ref === undefined ? '' : `${code(refName(schema.$ref))}: `;
  const parts = target.allOf ?? [target];
  const lines: string[] = [];
  const shared: FieldRow[] = [];
  for (const part of parts) {
    const resolved = resolve(doc, part);
    const union = resolved.oneOf ?? resolved.anyOf;
    if (union !== undefined) {
      lines.push(`${name}one of`, '');
      for (const variant of union) lines.push(`- ${inline(doc, variant)}`);
      lines.push('');
    } else if (resolved.properties !== undefined) {
      shared.push(...fieldsOf(doc, resolved));
    }
  }
  if (shared.length > 0) {
    if (lines.length > 0) lines.push('with');
    else if (name !== '')
      lines.push(`${name}${target.description ? cell(target.description) : ''}`.trimEnd());
    lines.push('', ...fieldTable(shared), '');
  } else if (lines.length === 0) {
    lines.push(
      `${name}${code(typeOf(target))}${target.description ? ` — ${cell(target.description)}` : ''}`,
      '',
    );
  }
  return lines;
}

function access(op: Operation): string {
  const who: Record<string, string> = {
    anyone: 'anyone, no token needed',
    client: 'a client or admin token',
    admin: 'an admin token',
    'admin-when-tokens': 'an admin token when tokens are configured (else anyone on loopback)',
  };
  const parts = [op['x-access'] === undefined ? 'not declared' : (who[op['x-access']] ?? op['x-access'])];
  if (op['x-capability'] !== undefined) parts.push(`with the ${code(op['x-capability'])} capability`);
  if (op['x-rate-limited'] === 'expensive') parts.push('counted as an expensive call (rate-limited)');
  return parts.join(', ');
}

function responseBody(doc: OpenApiDocument, response: Response): string {
  const bodies = Object.entries(response.content ?? {}).map(([media, { schema }]) => {
    if (schema === undefined) return code(media);
    const target = resolve(doc, schema);
    const fields =
      schema.$ref !== undefined && target.properties !== undefined
        ? ` {${Object.keys(target.properties)
            .map((f) => `${f}${target.required?.includes(f) ? '' : '?'}`)
            .join(', ')}}`
        : '';
    return `${code(media)} ${code(typeOf(schema))}${cell(fields)}`;
  });
  const headers = Object.keys(response.headers ?? {}).map(code);
  return [...bodies, ...(headers.length > 0 ? [`headers ${headers.join(', ')}`] : [])].join('; ');
}

const anchor = (method: string, route: string) =>
  `${method} ${route}`
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');

function operation(doc: OpenApiDocument, method: string, route: string, op: Operation): string[] {
  const lines = [`### ${method.toUpperCase()} ${route}`, ''];
  if (op.summary) lines.push(`${op.summary}.`.replace(/\.\.$/, '.'), '');
  if (op.description) lines.push(op.description, '');
  lines.push(`- **Who:** ${access(op)}`);
  if (op.operationId) lines.push(`- **Operation id:** ${code(op.operationId)}`);
  lines.push('');
  if (op.parameters !== undefined && op.parameters.length > 0) {
    lines.push('**Parameters**', '', '| name | in | type | required | notes |', '|---|---|---|---|---|');
    for (const p of op.parameters) {
      const schema = p.schema ?? {};
      const text = notes({ ...schema, description: p.description ?? schema.description });
      lines.push(
        `| ${code(p.name)} | ${p.in} | ${cell(code(typeOf(schema)))} | ${p.required ? 'yes' : ''} | ${text} |`.replace(
          / +\|/g,
          ' |',
        ),
      );
    }
    lines.push('');
  }
  if (op.requestBody?.content !== undefined) {
    lines.push(`**Request body** (${op.requestBody.required ? 'required' : 'optional'})`, '');
    for (const [media, { schema }] of Object.entries(op.requestBody.content)) {
      lines.push(`${code(media)}:`, '');
      if (schema !== undefined) lines.push(...bodySchema(doc, schema));
    }
  }
  const responses = Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b));
  // Error responses carry the generic meaning of their codes (the Error codes table): one line.
  const errors = responses.flatMap(([status, r]) =>
    (r['x-error-codes'] ?? []).map((c) => `${status} ${code(c)}`),
  );
  lines.push('**Responses**', '', '| status | meaning | body |', '|---|---|---|');
  for (const [status, response] of responses) {
    if (response['x-error-codes'] !== undefined) continue;
    lines.push(
      `| ${status} | ${cell(response.description ?? '')} | ${responseBody(doc, response)} |`.replace(
        / +\|/g,
        ' |',
      ),
    );
  }
  lines.push('');
  if (errors.length > 0) lines.push(`**Errors** ([codes](#error-codes)): ${errors.join(', ')}`, '');
  return lines;
}

/** docs/http-api.md from `doc`: the preamble, an index of operations, each operation, the error codes. */
export function renderHttpApi(doc: OpenApiDocument, preamble: string): string {
  const declared = (doc.tags ?? []).map((t) => t.name);
  const ops = Object.entries(doc.paths).flatMap(([route, byMethod]) =>
    Object.entries(byMethod)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ route, method, op, tag: op.tags?.[0] ?? 'other' })),
  );
  const undeclared = [...new Set(ops.map((o) => o.tag))].filter((t) => !declared.includes(t)).sort();
  const tags = [...declared, ...undeclared].filter((t) => ops.some((o) => o.tag === t));
  const order = (o: (typeof ops)[number]) =>
    [tags.indexOf(o.tag), o.route, METHODS.indexOf(o.method)] as const;
  ops.sort((a, b) => {
    const [ta, ra, ma] = order(a);
    const [tb, rb, mb] = order(b);
    return ta - tb || (ra < rb ? -1 : ra > rb ? 1 : 0) || ma - mb;
  });

  const out: string[] = [
    preamble.trimEnd(),
    '',
    '## Operations',
    '',
    `Generated from the OpenAPI document (${doc.info.title}, version ${doc.info.version}) by ${code('npm run docs:api')}; do not edit below this line by hand.`,
    '',
    '| operation | who | what |',
    '|---|---|---|',
  ];
  const short: Record<string, string> = {
    anyone: 'anyone',
    client: 'client',
    admin: 'admin',
    'admin-when-tokens': 'admin when tokens are configured',
  };
  for (const { route, method, op } of ops) {
    const who = [
      short[op['x-access'] ?? ''] ?? op['x-access'] ?? '',
      op['x-capability'] ? `+ ${code(op['x-capability'])}` : '',
    ]
      .filter((s) => s !== '')
      .join(' ');
    const title = `${method.toUpperCase()} ${route}`;
    out.push(`| [${code(title)}](#${anchor(method, route)}) | ${who} | ${cell(op.summary ?? '')} |`);
  }
  out.push('');
  for (const tag of tags) {
    const description = doc.tags?.find((t) => t.name === tag)?.description;
    out.push(`## ${tag[0]!.toUpperCase()}${tag.slice(1)}`, '');
    if (description) out.push(`${description[0]!.toUpperCase()}${description.slice(1)}.`, '');
    for (const o of ops.filter((x) => x.tag === tag)) out.push(...operation(doc, o.method, o.route, o.op));
  }
  const codes = Object.entries(doc['x-error-codes'] ?? {});
  if (codes.length > 0) {
    out.push(
      '## Error codes',
      '',
      `Every error answer is ${code('{"error":{"code","message","requestId","retryable","details?"}}')}; the code fixes the status.`,
      '',
      '| code | status | retryable | meaning |',
      '|---|---|---|---|',
      ...codes.map(
        ([name, c]) =>
          `| ${code(name)} | ${c.status} | ${c.retryable ? 'yes' : 'no'} | ${cell(c.description)} |`,
      ),
      '',
    );
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

/** The page as it should be now. */
export async function currentHttpApiPage(): Promise<string> {
  return renderHttpApi(await servedDocument(), await readFile(PREAMBLE, 'utf8'));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await writeFile(HTTP_API_PAGE, await currentHttpApiPage());
  process.stdout.write(`wrote ${path.relative(process.cwd(), HTTP_API_PAGE)}\n`);
}
