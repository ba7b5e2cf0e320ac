/**
 * The bridge's configuration: one zod schema over environment variables and CLI flags, parsed once at
 * start. Flags win over the environment. A bad value fails fast with the name of the variable (or flag)
 * that carried it.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { endpointSchema } from './protocol/adb/endpoint.ts';
import { advertisedEndpoint, parsePortRange } from './protocol/adb/relay-policy.ts';

/** What a node name looks like (DEVICEBRIDGE_NODE, the data dir's `node-id`). */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const port = z.coerce.number().int().min(0).max(65535);
const bool = z
  .union([z.boolean(), z.enum(['1', '0', 'true', 'false', 'yes', 'no'])])
  .transform((v) => v === true || v === '1' || v === 'true' || v === 'yes');

/** Each key: [environment variable, schema]. The flag of the same key (camelCase) overrides it. */
const fields = {
  host: ['DEVICEBRIDGE_HOST', z.string().min(1).default('127.0.0.1')],
  port: ['DEVICEBRIDGE_PORT', port.default(7100)],
  dataDir: ['DEVICEBRIDGE_DATA_DIR', z.string().min(1).default('./var')],
  tokensFile: ['DEVICEBRIDGE_TOKENS_FILE', z.string().min(1).optional()],
  publicUrl: ['DEVICEBRIDGE_PUBLIC_URL', z.url({ protocol: /^https?$/ }).optional()],
  /**
   * The URL other nodes forward lease-scoped calls to: this node's address on the fleet's private
   * network (`http://bridge1:7100`); never put into a manifest. Default: the public URL.
   */
  nodeUrl: ['DEVICEBRIDGE_NODE_URL', z.url({ protocol: /^https?$/ }).optional()],
  maxUploadBytes: [
    'DEVICEBRIDGE_MAX_UPLOAD_BYTES',
    z.coerce
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
  ],
  logLevel: [
    'LOG_LEVEL',
    z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  ],
  /** Log lines: `json`, `pretty` (human), or `auto` (pretty on a terminal, JSON otherwise). */
  logFormat: ['LOG_FORMAT', z.enum(['auto', 'json', 'pretty']).default('auto')],
  s3Bucket: ['S3_BUCKET', z.string().min(3).max(63).optional()],
  s3Prefix: ['S3_PREFIX', z.string().default('')],
  s3Endpoint: ['S3_ENDPOINT', z.url().optional()],
  s3Region: ['S3_REGION', z.string().min(1).default('us-east-1')],
  s3ForcePathStyle: ['S3_FORCE_PATH_STYLE', bool.default(false)],
  s3PresignSeconds: ['S3_PRESIGN_SECONDS', z.coerce.number().int().min(0).max(604800).default(0)],
  s3PublicBaseUrl: ['S3_PUBLIC_BASE_URL', z.url().optional()],
  adbServer: ['ADB_SERVER', endpointSchema.optional()],
  adbPort: ['DEVICEBRIDGE_ADB_PORT', port.default(5137)],
  adbPath: ['DEVICEBRIDGE_ADB_PATH', z.string().min(1).default('adb')],
  redisUrl: [
    'REDIS_URL',
    z
      .string()
      .regex(/^rediss?:\/\//, 'expected redis:// or rediss:// URL')
      .optional(),
  ],
  /** Simulated devices: a count, or `auto` (one when no real device is attached). */
  simulate: [
    'DEVICEBRIDGE_SIMULATE',
    z
      .union([z.literal('auto'), z.coerce.number().int().min(0).max(64)])
      .default(0)
      .transform((v) => (v === 'auto' ? -1 : v)),
  ],
  redisPrefix: [
    'DEVICEBRIDGE_REDIS_PREFIX',
    z
      .string()
      .regex(/^[A-Za-z0-9:._-]{1,64}$/, 'expected [A-Za-z0-9:._-]{1,64}')
      .default('devicebridge:'),
  ],
  nodeName: [
    'DEVICEBRIDGE_NODE',
    z.string().regex(NODE_NAME_PATTERN, 'expected [A-Za-z0-9._-]{1,64}').optional(),
  ],
  devicesFile: ['DEVICEBRIDGE_DEVICES_FILE', z.string().min(1).optional()],
  /** The farm's reset policy (JSON): what the reset between tenants leaves alone. */
  resetPolicyFile: ['DEVICEBRIDGE_RESET_POLICY', z.string().min(1).optional()],
  tunnelAllow: ['DEVICEBRIDGE_TUNNEL_ALLOW', z.string().default('')],
  devices: ['DEVICEBRIDGE_DEVICES', bool.default(true)],
  /** The whole request (headers and body) must arrive within this; slow bodies are cut off. */
  requestTimeoutMs: [
    'DEVICEBRIDGE_REQUEST_TIMEOUT_MS',
    z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  ],
  /** The request headers must arrive within this. */
  headersTimeoutMs: [
    'DEVICEBRIDGE_HEADERS_TIMEOUT_MS',
    z.coerce.number().int().min(100).max(600_000).default(15_000),
  ],
  /** A call forwarded to a device's owner node must get the owner's answer headers within this. */
  forwardTimeoutMs: [
    'DEVICEBRIDGE_FORWARD_TIMEOUT_MS',
    z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  ],
  /** Idle keep-alive connections are closed after this. */
  keepAliveTimeoutMs: [
    'DEVICEBRIDGE_KEEPALIVE_TIMEOUT_MS',
    z.coerce.number().int().min(100).max(600_000).default(5_000),
  ],
  /** Concurrent TCP connections the server accepts; more are refused at once. */
  maxConnections: [
    'DEVICEBRIDGE_MAX_CONNECTIONS',
    z.coerce.number().int().min(1).max(1_000_000).default(1024),
  ],
  /** Failed authentications per minute per client address and per presented token (0 = no limit). */
  rateAuthFailures: [
    'DEVICEBRIDGE_RATE_AUTH_FAILURES',
    z.coerce.number().int().min(0).max(1_000_000).default(60),
  ],
  /** Expensive calls (snapshot, screenshot, publish) per minute per token and per client address (0 = no limit). */
  rateExpensive: [
    'DEVICEBRIDGE_RATE_EXPENSIVE',
    z.coerce.number().int().min(0).max(1_000_000).default(12_000),
  ],
  /** How often this node refreshes its directory entry; it counts as dead after 3 missed beats. */
  heartbeatMs: ['DEVICEBRIDGE_HEARTBEAT_MS', z.coerce.number().int().min(100).max(600_000).default(5000)],
  /** Unauthenticated `GET /metrics` on its own port (unset: off; 0: a free port). */
  metricsPort: ['DEVICEBRIDGE_METRICS_PORT', port.optional()],
  metricsHost: ['DEVICEBRIDGE_METRICS_HOST', z.string().min(1).default('127.0.0.1')],
  /**
   * Shutdown (SIGTERM): how long calls in flight may take to finish before their connections are
   * cut; the orchestrator's grace period (Kubernetes terminationGracePeriodSeconds) must be longer.
   */
  drainGraceMs: ['DEVICEBRIDGE_DRAIN_GRACE_MS', z.coerce.number().int().min(0).max(600_000).default(10_000)],
  /** Where lease adb endpoints listen (`adb connect` reaches them). */
  adbEndpointHost: ['DEVICEBRIDGE_ADB_ENDPOINT_HOST', z.string().min(1).default('127.0.0.1')],
  /** Their ports: `0` (any free port), `PORT` or `FROM-TO`. */
  adbEndpointPorts: [
    'DEVICEBRIDGE_ADB_ENDPOINT_PORTS',
    z
      .string()
      .refine((v) => {
        try {
          parsePortRange(v);
          return true;
        } catch {
          return false;
        }
      }, 'expected 0, PORT or FROM-TO (1 ≤ FROM ≤ TO ≤ 65535)')
      .default('0'),
  ],
  /** The host clients are told to `adb connect` to (a public name behind NAT); default the listen host. */
  adbEndpointAdvertisedHost: [
    'DEVICEBRIDGE_ADB_ENDPOINT_ADVERTISED_HOST',
    z
      .string()
      .refine((v) => {
        try {
          advertisedEndpoint(v, 1);
          return true;
        } catch {
          return false;
        }
      }, 'expected a host name or an IP address')
      .optional(),
  ],
  /**
   * How long `DELETE /v1/leases/{id}` waits for the lease's teardown; past it the release answers
   * with the teardown pending (it runs on; its record follows in GET /v1/teardowns).
   */
  releaseWaitMs: ['DEVICEBRIDGE_RELEASE_WAIT_MS', z.coerce.number().int().min(0).max(600_000).default(5000)],
  healthIntervalMs: [
    'DEVICEBRIDGE_HEALTH_INTERVAL_MS',
    z.coerce.number().int().min(100).max(3_600_000).default(5000),
  ],
} as const;

type Fields = typeof fields;
export type Config = { -readonly [K in keyof Fields]: z.output<Fields[K][1]> };
export type ConfigKey = keyof Fields;
export type ConfigFlags = Partial<{ [K in keyof Fields]: unknown }>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`invalid configuration: ${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Parse env + flags once. Throws `ConfigError` naming the first bad variable or flag. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, flags: ConfigFlags = {}): Config {
  const out: Record<string, unknown> = {};
  for (const [key, [envName, schema]] of Object.entries(fields) as [string, readonly [string, z.ZodType]][]) {
    const fromFlag = flags[key as ConfigKey];
    const raw = fromFlag !== undefined ? fromFlag : env[envName] === '' ? undefined : env[envName];
    const source = fromFlag !== undefined ? flagName(key) : envName;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      throw new ConfigError(source, parsed.error.issues[0]?.message ?? 'invalid value');
    }
    out[key] = parsed.data;
  }
  const config = out as Config;
  config.dataDir = path.resolve(config.dataDir);
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError(
      'DEVICEBRIDGE_HEADERS_TIMEOUT_MS',
      'must not exceed DEVICEBRIDGE_REQUEST_TIMEOUT_MS',
    );
  }
  if (config.nodeUrl !== undefined) {
    const url = new URL(config.nodeUrl);
    if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
      throw new ConfigError('DEVICEBRIDGE_NODE_URL', 'must not carry credentials, a query or a fragment');
    }
  }
  if (config.s3PresignSeconds > 0 && config.s3Bucket === undefined) {
    throw new ConfigError('S3_PRESIGN_SECONDS', 'requires S3_BUCKET');
  }
  return config;
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (h.startsWith('::ffff:')) return h.slice(7).startsWith('127.');
  return false;
}
