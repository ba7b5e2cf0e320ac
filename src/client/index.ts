/**
 * Typed HTTP client of the Device Bridge API (`devicebridge/client`). Every method returns the
 * parsed JSON of the response; an error response throws `BridgeClientError` with the server's stable
 * `code`, the HTTP status, `retryable` and the `requestId` to quote in a bug report.
 */
import type {
  A11yActionRequest,
  A11yActionResult,
  A11yNode,
  A11yTree,
  A11yTreeNormalized,
  A11yTreeQuery,
  A11yTreeRaw,
  AcquireLeaseRequest,
  AdbEndpoint,
  AppActionResult,
  Attempt,
  Clipboard,
  Device,
  DeviceList,
  DoctorCheck,
  DoctorDevice,
  DoctorReport,
  DoctorRequest,
  EnsureHelperResult,
  ErrorBody,
  GestureRequest,
  GestureResponse,
  GestureSpec,
  GlassDone,
  HelperListResponse,
  HelperManifestBody,
  InstallAppRequest,
  Lease,
  LeaseAppBody,
  LeaseAppList,
  LeaseList,
  LeaseSelector,
  LogcatQuery,
  LogEntryBody,
  ManifestVerdict,
  NormalizedSnapshot,
  PointerPoint,
  RegisterDeviceRequest,
  ReleaseLeaseResponse,
  ReleaseManifestBody,
  ShellRequest,
  ShellResponse,
  ShellStreamRequest,
  SnapshotJsonResponse,
  SnapshotNode,
  SnapshotRequest,
  SnapshotResponse,
  SnapshotXmlResponse,
  Teardown,
  TeardownList,
  Transport,
  ViewportResponse,
  WaiterList,
  Whoami,
} from '../api/index.ts';
import { openScreenSocket, type ScreenConnection, type ScreenOptions } from './screen.ts';
import { parseShellEventLine, type ShellStreamEvent } from './shell-events.ts';

export { ScreenMessageError } from '../protocol/screen/viewer-messages.ts';
export type { ScreenClientEvent, ScreenConnection, ScreenOptions } from './screen.ts';
export type { ShellStreamEvent } from './shell-events.ts';

/** Request and response types of the API contract (src/api/), inferred from its zod schemas. */
export type {
  A11yActionRequest,
  A11yActionResult,
  A11yNode,
  A11yTree,
  A11yTreeNormalized,
  A11yTreeQuery,
  A11yTreeRaw,
  AcquireLeaseRequest,
  AdbEndpoint,
  AppActionResult,
  Attempt,
  Clipboard,
  Device,
  DeviceList,
  DoctorCheck,
  DoctorDevice,
  DoctorReport,
  DoctorRequest,
  EnsureHelperResult,
  ErrorBody,
  GestureRequest,
  GestureResponse,
  GestureSpec,
  GlassDone,
  HelperListResponse,
  InstallAppRequest,
  Lease,
  LeaseAppBody,
  LeaseAppList,
  LeaseList,
  LeaseSelector,
  LogcatQuery,
  LogEntryBody,
  ManifestVerdict,
  NormalizedSnapshot,
  PointerPoint,
  RegisterDeviceRequest,
  ReleaseLeaseResponse,
  ReleaseManifestBody,
  ShellRequest,
  ShellResponse,
  ShellStreamRequest,
  SnapshotJsonResponse,
  SnapshotNode,
  SnapshotRequest,
  SnapshotResponse,
  SnapshotXmlResponse,
  Teardown,
  TeardownList,
  Transport,
  ViewportResponse,
  WaiterList,
  Whoami,
};
/** Earlier names of some of these types. */
export type HelperManifest = HelperManifestBody;
export type EnsureResult = EnsureHelperResult;
export type TeardownRecord = Teardown;
export type DeviceView = Device;
export type CaptureOptions = Omit<SnapshotRequest, 'format' | 'transport' | 'deadlineMs'>;

export interface ClientOptions {
  /** Default: env DEVICEBRIDGE_URL, else http://127.0.0.1:7100. */
  baseUrl?: string;
  /** Default: env DEVICEBRIDGE_TOKEN. */
  token?: string;
  fetch?: typeof fetch;
  /** Per-request timeout (default 120 s; lease acquisition adds its waitSeconds). */
  timeoutMs?: number;
}

/**
 * The non-empty lines of an NDJSON body as they arrive (a last line without its newline is dropped).
 * Aborting `signal` cancels the body and throws its reason: a `fetch` that does not tie the body to
 * the request's signal (an in-process `app.request`) would otherwise keep a quiet stream open.
 */
async function* ndjsonLines(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  const cancel = () => reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  let rest = '';
  try {
    if (signal?.aborted) await cancel();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      rest += decoder.decode(next.value, { stream: true });
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line !== '') yield line;
    }
    signal?.throwIfAborted();
  } finally {
    signal?.removeEventListener('abort', cancel);
    // The caller stopped early (a break): the rest of the body is not wanted.
    await reader.cancel().catch(() => undefined);
  }
}

export class BridgeClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    readonly requestId: string | undefined,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'BridgeClientError';
  }
}

/**
 * Check a bridge base URL (`DEVICEBRIDGE_URL`, `--url`): http(s), no credentials, no query or
 * fragment. Resolves the URL without a trailing slash. Errors (`BridgeClientError`, status 0, code
 * INVALID_ARGUMENT) never quote the URL: it may carry a password. Tokens go in
 * `DEVICEBRIDGE_TOKEN`, never in the URL.
 */
export function parseBridgeUrl(raw: string, source = 'DEVICEBRIDGE_URL'): string {
  const refuse = (why: string) =>
    new BridgeClientError(0, 'INVALID_ARGUMENT', `${source} ${why}`, false, undefined);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not a valid URL (expected http(s)://host:port)');
  }
  if (url.username !== '' || url.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(raw.trim())) {
    throw refuse('must not carry credentials (user:password@); put the token in DEVICEBRIDGE_TOKEN');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('must be an http(s) URL');
  if (url.search !== '' || url.hash !== '') throw refuse('must not carry a query or a fragment');
  return url.href.replace(/\/+$/, '');
}

/** A screenshot answer: the PNG, or `notModified` when `ifNoneMatch` still matched. */
export type ScreenshotResult =
  | { notModified: false; etag: string; width: number; height: number; png: Uint8Array }
  | { notModified: true; etag: string };

export class DeviceBridgeClient {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = parseBridgeUrl(
      options.baseUrl ?? process.env['DEVICEBRIDGE_URL'] ?? 'http://127.0.0.1:7100',
      options.baseUrl === undefined ? 'DEVICEBRIDGE_URL' : 'the bridge URL',
    );
    this.#token = options.token ?? process.env['DEVICEBRIDGE_TOKEN'];
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
  }

  async #request<T>(
    method: string,
    path: string,
    body?: unknown,
    extra: { timeoutMs?: number; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const res = await this.#send(method, path, body, { Accept: 'application/json', ...extra.headers }, extra);
    if (res.status === 204) return undefined as T;
    return (await this.#answer(res)) as T;
  }

  /** The parsed JSON of an answer; an error answer (or a non-JSON one) throws BridgeClientError. */
  async #answer(res: Response): Promise<unknown> {
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new BridgeClientError(
        res.status,
        'INTERNAL',
        `non-JSON response (${res.status})`,
        false,
        res.headers.get('x-request-id') ?? undefined,
      );
    }
    if (!res.ok) throw this.#error(res, json);
    return json;
  }

  #send(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    /** `timeoutMs: null`: no request timeout (a stream as long as the lease), only `signal`. */
    extra: { timeoutMs?: number | null; signal?: AbortSignal },
  ): Promise<Response> {
    const all: Record<string, string> = { ...headers };
    if (this.#token) all['Authorization'] = `Bearer ${this.#token}`;
    // Bytes (an APK upload) go as they are, with the caller's Content-Type; anything else is JSON.
    const raw = body instanceof Uint8Array;
    if (body !== undefined && !raw) all['Content-Type'] = 'application/json';
    return this.#fetch(`${this.baseUrl}${path}`, {
      method,
      headers: all,
      ...(body === undefined ? {} : { body: raw ? body : JSON.stringify(body) }),
      ...(extra.timeoutMs === null
        ? extra.signal
          ? { signal: extra.signal }
          : {}
        : { signal: AbortSignal.timeout(extra.timeoutMs ?? this.#timeoutMs) }),
    });
  }

  /** The typed error of a failed answer (its JSON error body, when it has one). */
  #error(res: Response, json: unknown): BridgeClientError {
    const e = (json as Partial<ErrorBody> | undefined)?.error;
    return new BridgeClientError(
      res.status,
      e?.code ?? 'INTERNAL',
      e?.message ?? `HTTP ${res.status}`,
      e?.retryable ?? res.status >= 500,
      e?.requestId ?? res.headers.get('x-request-id') ?? undefined,
      e?.details,
    );
  }

  /** Who the token is (name, tenant, role) and what it may do: its capabilities (admins: every one). */
  whoami() {
    return this.#request<Whoami>('GET', '/v1/whoami');
  }

  // Helpers and manifests.
  listHelpers() {
    return this.#request<HelperListResponse>('GET', '/v1/helpers');
  }
  manifest(name: string, version?: string) {
    const path =
      version === undefined
        ? `/v1/helpers/${encodeURIComponent(name)}/manifest`
        : `/v1/helpers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}/manifest`;
    return this.#request<ReleaseManifestBody>('GET', path);
  }
  validateManifest(manifest: unknown) {
    return this.#request<ManifestVerdict>('POST', '/v1/manifests/validate', manifest);
  }

  // Devices.
  listDevices() {
    return this.#request<DeviceList>('GET', '/v1/devices');
  }
  /** Admin: record the device's baseline (what the reset between tenants restores) now. */
  recordDeviceBaseline(id: string) {
    return this.#request<Device>('POST', `/v1/devices/${encodeURIComponent(id)}/baseline`);
  }
  /** Admin: put a quarantined device back into service. */
  clearDeviceQuarantine(id: string) {
    return this.#request<Device>('POST', `/v1/devices/${encodeURIComponent(id)}/clear-quarantine`);
  }
  registerDevice(body: RegisterDeviceRequest) {
    return this.#request<Device>('POST', '/v1/devices', body);
  }
  removeDevice(id: string, options: { force?: boolean } = {}) {
    return this.#request<void>(
      'DELETE',
      `/v1/devices/${encodeURIComponent(id)}${options.force ? '?force=true' : ''}`,
    );
  }

  // Leases.
  acquireLease(body: AcquireLeaseRequest = {}) {
    return this.#request<Lease>(
      'POST',
      '/v1/leases',
      { selector: body.selector ?? {}, ...body },
      {
        timeoutMs: this.#timeoutMs + (body.waitSeconds ?? 0) * 1000,
      },
    );
  }
  listLeases() {
    return this.#request<LeaseList>('GET', '/v1/leases');
  }
  /** Ended leases with their teardown records, newest first (limit 1–100, default 20). */
  listTeardowns(limit?: number) {
    return this.#request<TeardownList>('GET', `/v1/teardowns${limit === undefined ? '' : `?limit=${limit}`}`);
  }

  /** Lease requests waiting for a device, with their place in the queue (your tenant; admins: all). */
  listWaiters() {
    return this.#request<WaiterList>('GET', '/v1/waiters');
  }
  getLease(id: string) {
    return this.#request<Lease>('GET', `/v1/leases/${encodeURIComponent(id)}`);
  }
  renewLease(id: string, ttlSeconds?: number) {
    return this.#request<Lease>(
      'POST',
      `/v1/leases/${encodeURIComponent(id)}/renew`,
      ttlSeconds === undefined ? {} : { ttlSeconds },
    );
  }
  releaseLease(id: string) {
    return this.#request<ReleaseLeaseResponse>('DELETE', `/v1/leases/${encodeURIComponent(id)}`);
  }
  ensureHelper(
    leaseId: string,
    name = 'android-snapshot-helper',
    policy?: 'missing-or-outdated' | 'always' | 'never',
  ) {
    return this.#request<EnsureHelperResult>(
      'POST',
      `/v1/leases/${encodeURIComponent(leaseId)}/helpers/${encodeURIComponent(name)}/ensure`,
      policy ? { policy } : {},
    );
  }
  /** The raw uiautomator XML (`format: 'xml'`), else the normalized JSON tree. */
  snapshot(leaseId: string, options: SnapshotRequest & { format: 'xml' }): Promise<SnapshotXmlResponse>;
  snapshot(leaseId: string, options?: SnapshotRequest & { format?: 'json' }): Promise<SnapshotJsonResponse>;
  snapshot(leaseId: string, options?: SnapshotRequest): Promise<SnapshotResponse>;
  snapshot(leaseId: string, options: SnapshotRequest = {}): Promise<SnapshotResponse> {
    return this.#request<SnapshotResponse>(
      'POST',
      `/v1/leases/${encodeURIComponent(leaseId)}/snapshot`,
      options,
    );
  }
  viewport(leaseId: string, transport?: Transport) {
    return this.#request<ViewportResponse>(
      'GET',
      `/v1/leases/${encodeURIComponent(leaseId)}/viewport${transport ? `?transport=${transport}` : ''}`,
    );
  }
  /**
   * The leased device's screen as PNG bytes with its size and ETag; with `ifNoneMatch` (an earlier
   * ETag) an unchanged screen answers `{notModified: true}` without the bytes.
   */
  async screenshot(
    leaseId: string,
    options: { deadlineMs?: number; ifNoneMatch?: string } = {},
  ): Promise<ScreenshotResult> {
    const query = options.deadlineMs === undefined ? '' : `?deadlineMs=${options.deadlineMs}`;
    const res = await this.#send(
      'GET',
      `/v1/leases/${encodeURIComponent(leaseId)}/screenshot${query}`,
      undefined,
      { Accept: 'image/png', ...(options.ifNoneMatch ? { 'If-None-Match': options.ifNoneMatch } : {}) },
      {},
    );
    const etag = res.headers.get('etag') ?? '';
    if (res.status === 304) return { notModified: true, etag };
    if (!res.ok) {
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      throw this.#error(res, json);
    }
    return {
      notModified: false,
      etag,
      width: Number(res.headers.get('x-screen-width')),
      height: Number(res.headers.get('x-screen-height')),
      png: new Uint8Array(await res.arrayBuffer()),
    };
  }
  gesture(leaseId: string, gesture: GestureRequest) {
    return this.#request<GestureResponse>(
      'POST',
      `/v1/leases/${encodeURIComponent(leaseId)}/gestures`,
      gesture,
    );
  }

  /**
   * Run the doctor on the leased device: every capability checked, the report (a failed check is
   * `ok: false`, not an error). Waits for the run's bound (`timeoutSeconds`, default 120) and a margin.
   */
  doctor(leaseId: string, request: DoctorRequest = {}) {
    return this.#request<DoctorReport>('POST', `/v1/leases/${encodeURIComponent(leaseId)}/doctor`, request, {
      timeoutMs: Math.max(this.#timeoutMs, ((request.timeoutSeconds ?? 120) + 30) * 1000),
    });
  }

  // Glass companions (the lease's agent and a11y service, started by the bridge on first use).
  /** The device's clipboard text. */
  clipboard(leaseId: string) {
    return this.#request<Clipboard>('GET', `/v1/leases/${encodeURIComponent(leaseId)}/clipboard`);
  }
  setClipboard(leaseId: string, text: string) {
    return this.#request<GlassDone>('PUT', `/v1/leases/${encodeURIComponent(leaseId)}/clipboard`, { text });
  }
  /** Type text into the focused field (faithful Unicode). */
  typeText(leaseId: string, text: string) {
    return this.#request<GlassDone>('POST', `/v1/leases/${encodeURIComponent(leaseId)}/text`, { text });
  }
  /** A key chord: `ctrl+a`, `shift+tab`, `enter`, `f5`. */
  pressKeys(leaseId: string, chord: string) {
    return this.#request<GlassDone>('POST', `/v1/leases/${encodeURIComponent(leaseId)}/keys`, { chord });
  }
  pointer(leaseId: string, gesture: PointerPoint[], button?: number) {
    return this.#request<GlassDone>('POST', `/v1/leases/${encodeURIComponent(leaseId)}/pointer`, {
      gesture,
      ...(button === undefined ? {} : { button }),
    });
  }
  /** The active window's accessibility tree: normalized (refs e1, e2, …) unless `format: 'raw'`. */
  a11yTree(leaseId: string, query: A11yTreeQuery & { format: 'raw' }): Promise<A11yTreeRaw>;
  a11yTree(leaseId: string, query?: A11yTreeQuery & { format?: 'normalized' }): Promise<A11yTreeNormalized>;
  a11yTree(leaseId: string, query?: A11yTreeQuery): Promise<A11yTree>;
  a11yTree(leaseId: string, query: A11yTreeQuery = {}): Promise<A11yTree> {
    const q = new URLSearchParams();
    if (query.format) q.set('format', query.format);
    if (query.package !== undefined) q.set('package', query.package);
    const search = q.size > 0 ? `?${q}` : '';
    return this.#request<A11yTree>('GET', `/v1/leases/${encodeURIComponent(leaseId)}/a11y/tree${search}`);
  }
  /**
   * `set_text` (with `text`) or `click` on a ref (`e4` or the raw 3) of the tree last served to the
   * lease. A click taps the centre of the node's bounds (the answer's `point`); `via: 'accessibility'`
   * sends ACTION_CLICK instead (which does nothing on Compose).
   */
  a11yAction(leaseId: string, action: A11yActionRequest) {
    return this.#request<A11yActionResult>(
      'POST',
      `/v1/leases/${encodeURIComponent(leaseId)}/a11y/actions`,
      action,
    );
  }

  /**
   * Open the lease's adb endpoint for the client's adb public key (the text of `adbkey.pub`);
   * `adb connect` the answer's `endpoint`. Only that key authenticates; it closes with the lease.
   */
  adbEndpoint(leaseId: string, publicKey: string) {
    return this.#request<AdbEndpoint>('POST', `/v1/leases/${encodeURIComponent(leaseId)}/adb`, { publicKey });
  }

  // Farm (issue 14).
  /** One command (`argv`, quoted by the bridge, or a `command` line); needs the `shell` capability. */
  shell(leaseId: string, request: ShellRequest) {
    return this.#request<ShellResponse>('POST', `/v1/leases/${encodeURIComponent(leaseId)}/shell`, request, {
      timeoutMs: this.#timeoutMs + (request.timeoutMs ?? 0),
    });
  }
  /**
   * One command with its output streamed: yields `{stream, data}` chunks (bytes) as they come, then
   * `{exit, durationMs}` last. A terminal error (TIMEOUT, LEASE_EXPIRED, DEVICE_OFFLINE) throws
   * BridgeClientError; aborting `signal` closes the command on the device. Read at your pace: the
   * bridge pauses the device's output for you.
   */
  async *shellStream(
    leaseId: string,
    request: ShellStreamRequest,
    signal?: AbortSignal,
  ): AsyncGenerator<Extract<ShellStreamEvent, { stream: unknown } | { exit: unknown }>> {
    const res = await this.#send(
      'POST',
      `/v1/leases/${encodeURIComponent(leaseId)}/shell/stream`,
      request,
      { Accept: 'application/x-ndjson' },
      { timeoutMs: null, ...(signal ? { signal } : {}) },
    );
    if (!res.ok || res.body === null) {
      await this.#answer(res);
      return;
    }
    const requestId = res.headers.get('x-request-id') ?? undefined;
    const broken = (why: string) => new BridgeClientError(res.status, 'UNAVAILABLE', why, true, requestId);
    for await (const line of ndjsonLines(res.body, signal)) {
      const event = parseShellEventLine(line);
      if (event === null)
        throw broken(`the shell stream sent a line that is not an event: ${line.slice(0, 80)}`);
      if ('error' in event) {
        const { code, message } = event.error;
        throw new BridgeClientError(res.status, code, message, code !== 'LEASE_EXPIRED', requestId);
      }
      yield event;
      if ('exit' in event) return;
    }
    throw broken('the shell stream ended before the exit status');
  }
  /** Install an app under test: APK bytes (uploaded) or `{sha256}` of an artifact published on the bridge. */
  installApp(
    leaseId: string,
    source: Uint8Array | InstallAppRequest,
    options: { installArgs?: readonly string[]; keep?: boolean } = {},
  ) {
    const path = `/v1/leases/${encodeURIComponent(leaseId)}/apps`;
    if (!(source instanceof Uint8Array)) return this.#request<LeaseAppBody>('POST', path, source);
    const query = new URLSearchParams();
    if (options.installArgs) query.set('installArgs', options.installArgs.join(' '));
    if (options.keep !== undefined) query.set('keep', String(options.keep));
    const qs = query.size > 0 ? `?${query}` : '';
    return this.#request<LeaseAppBody>('POST', `${path}${qs}`, source, {
      headers: { 'Content-Type': 'application/vnd.android.package-archive' },
    });
  }
  listApps(leaseId: string) {
    return this.#request<LeaseAppList>('GET', `/v1/leases/${encodeURIComponent(leaseId)}/apps`);
  }
  /** Launch (the launcher activity, or `component`), stop or clear the data of an app. */
  appAction(leaseId: string, packageName: string, action: 'launch' | 'stop' | 'clear', component?: string) {
    return this.#request<AppActionResult>(
      'POST',
      `/v1/leases/${encodeURIComponent(leaseId)}/apps/${encodeURIComponent(packageName)}/${action}`,
      component === undefined ? {} : { component },
    );
  }
  /**
   * The lease's logcat, entry by entry, until the lease ends or `signal` aborts (no request
   * timeout: the stream is as long as the lease). Read at your pace: the bridge waits for you.
   */
  async *logcat(
    leaseId: string,
    query: LogcatQuery = {},
    signal?: AbortSignal,
  ): AsyncGenerator<LogEntryBody> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.size > 0 ? `?${params}` : '';
    const res = await this.#send(
      'GET',
      `/v1/leases/${encodeURIComponent(leaseId)}/logcat${qs}`,
      undefined,
      { Accept: 'application/x-ndjson' },
      { timeoutMs: null, ...(signal ? { signal } : {}) },
    );
    if (!res.ok || res.body === null) {
      await this.#answer(res);
      return;
    }
    for await (const line of ndjsonLines(res.body, signal)) yield JSON.parse(line) as LogEntryBody;
  }
  /**
   * The lease's live screen (docs/live-screen.md): iterate the connection for `start`, `packet`
   * (one H.264 access unit, Annex B; key frames carry the SPS/PPS), `skipped` and `end` events, and
   * send input with its `pointer`, `key` and `text`. A refused socket throws BridgeClientError.
   */
  screen(leaseId: string, options: ScreenOptions = {}): Promise<ScreenConnection> {
    const params = new URLSearchParams();
    for (const name of ['maxSize', 'bitRate', 'maxFps'] as const) {
      const value = options[name];
      if (value !== undefined) params.set(name, String(value));
    }
    const qs = params.size > 0 ? `?${params}` : '';
    const url = new URL(`${this.baseUrl}/v1/leases/${encodeURIComponent(leaseId)}/screen${qs}`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const headers: Record<string, string> = {};
    if (this.#token) headers['Authorization'] = `Bearer ${this.#token}`;
    return openScreenSocket(url.href, headers, options, (refusal) => {
      let json: unknown;
      try {
        json = JSON.parse(refusal.body);
      } catch {
        json = undefined;
      }
      return this.#error(
        new Response(null, {
          status: refusal.status,
          headers: refusal.requestId === undefined ? {} : { 'x-request-id': refusal.requestId },
        }),
        json,
      );
    });
  }
  uninstallApp(leaseId: string, packageName: string) {
    return this.#request<AppActionResult>(
      'DELETE',
      `/v1/leases/${encodeURIComponent(leaseId)}/apps/${encodeURIComponent(packageName)}`,
    );
  }
}
