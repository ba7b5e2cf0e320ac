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
  /**
   * Concurrent TCP connections one client address may hold (trusted proxies are not counted); more
   * are closed as they are accepted (0 = no limit).
   */
  maxConnectionsPerAddress: [
    'DEVICEBRIDGE_MAX_CONNECTIONS_PER_ADDRESS',
    z.coerce.number().int().min(0).max(1_000_000).default(256),
  ],
  /** Failed authentications per minute per client address and per presented token (0 = no limit). */
  rateAuthFailures: [
    'DEVICEBRIDGE_RATE_AUTH_FAILURES',
    z.coerce.number().int().min(0).max(1_000_000).default(60),
  ],
  /**
   * The proxies (addresses and CIDR ranges, comma or space separated) whose `X-Forwarded-For` is
   * believed: the client address of a request from one of them is the last address its chain names
   * that is not itself a trusted proxy. Empty (the default): the client address is the TCP peer's.
   */
  trustedProxies: [
    'DEVICEBRIDGE_TRUSTED_PROXIES',
    z
      .string()
      .default('')
      .transform((text, ctx) => {
        try {
          return parseAddressRanges(text);
        } catch (err) {
          ctx.issues.push({ code: 'custom', message: (err as Error).message, input: text });
          return z.NEVER;
        }
      }),
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
  /** Live screen viewers per lease; one more is refused (429). */
  screenMaxViewers: ['DEVICEBRIDGE_SCREEN_MAX_VIEWERS', z.coerce.number().int().min(1).max(64).default(4)],
  /** Bytes one live screen viewer's queue may hold before it skips to the next key frame. */
  screenViewerQueueBytes: [
    'DEVICEBRIDGE_SCREEN_VIEWER_QUEUE_BYTES',
    z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(256 * 1024 * 1024)
      .default(4 * 1024 * 1024),
  ],
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

/** One range of IP addresses: its first `prefix` bits (of 32 or 128) are those of `bytes`. */
export interface AddressRange {
  readonly bytes: Uint8Array;
  readonly prefix: number;
  /** As written in configuration, normalised (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7/32`). */
  readonly text: string;
}

/**
 * An IP address as bytes: 4 for IPv4, 16 for IPv6, where an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.7`, how a dual-stack socket names an IPv4 peer) is its IPv4 address. Null for
 * anything that is not a bare address (names, brackets, ports, zone ids).
 */
export function addressBytes(address: string): Uint8Array | null {
  const family = isIP(address);
  if (family === 4) return Uint8Array.from(address.split('.').map(Number));
  if (family !== 6 || address.includes('%')) return null;
  const lower = address.toLowerCase();
  const [head, tail] = lower.includes('::') ? lower.split('::') : [lower, undefined];
  const groups = (part: string | undefined): number[] => {
    if (part === undefined || part === '') return [];
    return part.split(':').flatMap((g) => {
      if (!g.includes('.')) return [Number.parseInt(g, 16)];
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const left = groups(head);
  const right = groups(tail);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  for (const [i, w] of words.entries()) {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  }
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

/** Whether `address` (bytes of `addressBytes`) is in `range`. */
export function inRange(address: Uint8Array, range: AddressRange): boolean {
  if (address.length !== range.bytes.length) return false;
  const whole = Math.floor(range.prefix / 8);
  for (let i = 0; i < whole; i++) if (address[i] !== range.bytes[i]) return false;
  const rest = range.prefix % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (address[whole]! & mask) === (range.bytes[whole]! & mask);
}

function formatAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join('.');
  const words = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  // The longest run of two or more zero words becomes `::` (RFC 5952).
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && words[j] === '0') j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at < 0) return words.join(':');
  return `${words.slice(0, best.at).join(':')}::${words.slice(best.at + best.length).join(':')}`;
}

/**
 * A list of IP addresses and CIDR ranges (`10.0.0.0/8, 192.0.2.7 2001:db8::/32`), separated by
 * commas or spaces; empty text is no range. Strict: an entry that is not a bare address, a prefix
 * length out of range, host bits set under the prefix (`10.0.0.1/8`: write `10.0.0.0/8`) or an
 * IPv4-mapped IPv6 entry (write the IPv4 address) throws an error naming the entry.
 */
export function parseAddressRanges(text: string): AddressRange[] {
  const entries = text.split(/[\s,]+/).filter((e) => e !== '');
  return entries.map((entry) => {
    const bad = (why: string) => new Error(`entry ${JSON.stringify(entry)}: ${why}`);
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const family = isIP(address);
    const bytes = family === 0 ? null : addressBytes(address);
    if (bytes === null) throw bad('expected an IP address or a CIDR range (ADDRESS/PREFIX)');
    const bits = family === 4 ? 32 : 128;
    if (bytes.length !== bits / 8) throw bad('write an IPv4-mapped IPv6 address as its IPv4 address');
    const prefixText = slash < 0 ? String(bits) : entry.slice(slash + 1);
    if (!/^(0|[1-9]\d{0,2})$/.test(prefixText) || Number(prefixText) > bits) {
      throw bad(`the prefix length must be 0 to ${bits}`);
    }
    const range: AddressRange = { bytes, prefix: Number(prefixText), text: '' };
    const network = new Uint8Array(bytes.length);
    for (let i = 0; i < bytes.length; i++) {
      const keep = Math.max(0, Math.min(8, range.prefix - 8 * i));
      network[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
    }
    if (network.some((b, i) => b !== bytes[i])) {
      throw bad(
        `host bits are set under /${range.prefix} (the range is ${formatAddress(network)}/${range.prefix})`,
      );
    }
    return { bytes, prefix: range.prefix, text: `${formatAddress(bytes)}/${range.prefix}` };
  });
}
