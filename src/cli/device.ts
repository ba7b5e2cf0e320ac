/**
 * `devicebridge device ensure|snapshot|viewport|gesture --serial S [--connect host:port]
 *  --manifest FILE|URL [--apk FILE] [--transport auto|session|one-shot] [--json]`
 *
 * Direct use of the helper driver without leases: uses the bridge's adb server on
 * DEVICEBRIDGE_ADB_PORT (started if nothing answers there) or ADB_SERVER.
 * Exit codes: 0 ok, 1 device/helper failure, 2 usage or invalid input.
 */
import type { Command } from 'commander';
import { BridgeError } from '../errors.ts';
import { EXIT_FAILURE, EXIT_USAGE, ExitCode, UsageError } from './exit.ts';
import { intFlag, readChunks, readInput } from './input.ts';

interface CommonOptions {
  serial?: string;
  connect?: string;
  manifest: string;
  apk?: string;
  transport: string;
  json?: boolean;
  maxDepth?: string;
  maxNodes?: string;
  timeoutMs?: string;
  waitForIdleTimeoutMs?: string;
  format?: string;
  policy?: string;
  duration?: string;
}

function withCommon(cmd: Command): Command {
  return cmd
    .option('--serial <serial>', 'adb serial of the device (default: the --connect endpoint)')
    .option('--connect <host:port>', 'adb connect this tunnel first')
    .requiredOption(
      '--manifest <file|url>',
      'release manifest of the snapshot helper (file, - or http(s) URL)',
    )
    .option('--apk <file>', 'local APK for a manifest whose apkUrl is null (verified by sha256)')
    .option('--transport <transport>', 'auto | session | one-shot', 'auto')
    .option('--max-depth <n>', 'maxDepth capture option')
    .option('--max-nodes <n>', 'maxNodes capture option')
    .option('--timeout-ms <n>', 'helper timeoutMs')
    .option('--wait-for-idle-timeout-ms <n>', 'helper waitForIdleTimeoutMs')
    .option('--json', 'print one JSON object');
}

function num(name: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isFinite(n))
    throw new UsageError(`${name} must be a number`);
  return n;
}

/** How long fetching a `--manifest` URL may take, body included. */
const MANIFEST_FETCH_TIMEOUT_MS = 30_000;

/**
 * A manifest URL's body, at most `limit` bytes (reading stops there: the parse then names the size
 * limit) and within MANIFEST_FETCH_TIMEOUT_MS: a server that streams without end or stalls cannot
 * hold the command or fill its memory.
 */
async function fetchManifest(source: string, limit: number): Promise<Uint8Array> {
  const failed = (err: unknown): UsageError => {
    const reason =
      err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
        ? `no complete answer within ${MANIFEST_FETCH_TIMEOUT_MS / 1000} s`
        : err instanceof Error
          ? err.message
          : String(err);
    return new UsageError(`--manifest: cannot fetch ${source}: ${reason}`);
  };
  const res = await fetch(source, { signal: AbortSignal.timeout(MANIFEST_FETCH_TIMEOUT_MS) }).catch(
    (err: unknown) => {
      throw failed(err);
    },
  );
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new UsageError(`--manifest: ${source} answered ${res.status}`);
  }
  try {
    return await readChunks((res.body ?? []) as AsyncIterable<Uint8Array>, limit);
  } catch (err) {
    throw failed(err);
  }
}

async function loadManifest(source: string) {
  const { validateManifest } = await import('../manifest/index.ts');
  const { MAX_MANIFEST_BYTES, parseManifestBytes } = await import('./manifest.ts');
  let bytes: Uint8Array;
  if (/^https?:\/\//.test(source)) {
    bytes = await fetchManifest(source, MAX_MANIFEST_BYTES + 1);
  } else {
    bytes = await readInput(source, MAX_MANIFEST_BYTES + 1);
  }
  const parsed = parseManifestBytes(bytes);
  if ('error' in parsed) throw new UsageError(`--manifest: ${parsed.error.message}`);
  const verdict = validateManifest(parsed.value);
  if (!verdict.valid) {
    throw new UsageError(
      `--manifest is invalid: ${verdict.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    );
  }
  return verdict.manifest;
}

/** Build the driver for one device, run `work`, close everything; print and map errors to exit codes. */
async function withDriver(
  opts: CommonOptions,
  work: (
    driver: import('../helpers/snapshot/driver.ts').SnapshotDriver,
  ) => Promise<{ human: string; json: unknown }>,
): Promise<void> {
  const transport = opts.transport;
  if (!['auto', 'session', 'one-shot'].includes(transport))
    throw new UsageError('--transport must be auto, session or one-shot');
  if (!opts.serial && !opts.connect) throw new UsageError('give --serial or --connect');
  const manifest = await loadManifest(opts.manifest);
  const path = await import('node:path');
  const { loadConfig } = await import('../config.ts');
  const { AdbRuntime } = await import('../adb/runtime.ts');
  const { ArtifactCache } = await import('../artifacts/cache.ts');
  const { openHelperDriver } = await import('../lease-session/index.ts');
  const { EnsureVerdicts } = await import('../helpers/snapshot/ensure-helper.ts');
  const config = loadConfig(process.env, {});
  const cache = new ArtifactCache(path.join(config.dataDir, 'cache', 'apk'));
  const { checkSignerPin } = await import('../helpers/apk-source.ts');
  const apk = async () => {
    let path: string;
    if (opts.apk) path = (await cache.importFile(opts.apk, manifest.sha256)).path;
    else if (manifest.apkUrl === null) throw new UsageError('the manifest has apkUrl null: give --apk FILE');
    else path = (await cache.fetch(manifest.apkUrl, manifest.sha256)).path;
    await checkSignerPin(path, manifest);
    return path;
  };
  const runtime = await AdbRuntime.start({
    port: config.adbPort,
    adbPath: config.adbPath,
    reuseRunning: true,
    ...(config.adbServer ? { external: config.adbServer } : {}),
  });
  let driver: import('../helpers/snapshot/driver.ts').SnapshotDriver | undefined;
  try {
    let serial = opts.serial;
    if (opts.connect) {
      const status = await runtime.tunnels.add(opts.connect);
      if (status.state !== 'device' && !(await runtime.tunnels.waitFor(opts.connect, 'device', 10_000))) {
        throw new BridgeError(
          'DEVICE_OFFLINE',
          `${opts.connect} is ${runtime.tunnels.status(opts.connect)?.state ?? 'unreachable'}`,
        );
      }
      serial ??= opts.connect;
    }
    // The same driver a lease's session opens (without a lease).
    driver = openHelperDriver({
      adb: runtime,
      serial: serial!,
      manifest,
      verdicts: new EnsureVerdicts(),
      apk,
    });
    const out = await work(driver);
    process.stdout.write(opts.json ? `${JSON.stringify(out.json)}\n` : `${out.human}\n`);
  } catch (err) {
    if (!(err instanceof BridgeError)) throw err;
    if (opts.json) process.stdout.write(`${JSON.stringify({ ok: false, error: err.toJSON() })}\n`);
    else process.stderr.write(`devicebridge: ${err.code}: ${err.message}\n`);
    throw new ExitCode(
      err.code === 'INVALID_ARGUMENT' || err.code === 'INSTALL_ARGS_REJECTED' ? EXIT_USAGE : EXIT_FAILURE,
    );
  } finally {
    await driver?.close().catch(() => undefined);
    await runtime.close();
  }
}

function capture(opts: CommonOptions) {
  const c: Record<string, number> = {};
  const pairs: Array<[string, string | undefined]> = [
    ['maxDepth', opts.maxDepth],
    ['maxNodes', opts.maxNodes],
    ['timeoutMs', opts.timeoutMs],
    ['waitForIdleTimeoutMs', opts.waitForIdleTimeoutMs],
  ];
  for (const [k, v] of pairs) {
    const n = intFlag(`--${k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}`, v);
    if (n !== undefined) c[k] = n;
  }
  return c;
}

export function registerDevice(program: Command): void {
  const device = program
    .command('device')
    .description('Drive the snapshot helper on one device directly (no lease)');

  withCommon(device.command('ensure').description('Install the helper if missing, outdated or mismatched'))
    .option('--policy <policy>', 'missing-or-outdated | always | never', 'missing-or-outdated')
    .action(async (opts: CommonOptions) => {
      const policy = opts.policy ?? 'missing-or-outdated';
      if (!['missing-or-outdated', 'always', 'never'].includes(policy))
        throw new UsageError('--policy must be missing-or-outdated, always or never');
      await withDriver(opts, async (d) => {
        const r = await d.ensure(policy as 'missing-or-outdated');
        const { describeView } = await import('../app/helper-views.ts');
        return { json: { ok: true, ...r }, human: describeView.ensure(r) };
      });
    });

  withCommon(device.command('snapshot').description('Capture a UI snapshot'))
    .option('--format <format>', 'json (normalized) | xml', 'json')
    .action(async (opts: CommonOptions) => {
      if (opts.format !== 'json' && opts.format !== 'xml')
        throw new UsageError('--format must be json or xml');
      await withDriver(opts, async (d) => {
        await d.ensure();
        const options = capture(opts);
        const s = await d.snapshot({ transport: opts.transport as 'auto', capture: options });
        // The answer the lease route gives, shaped by the same function.
        const { describeView, snapshotView } = await import('../app/helper-views.ts');
        const view = snapshotView(s, opts.format as 'json' | 'xml', options);
        return { json: { ok: true, ...view, result: s.result }, human: describeView.snapshot(view) };
      });
    });

  withCommon(device.command('viewport').description('Read the interactive-window viewport')).action(
    async (opts: CommonOptions) => {
      await withDriver(opts, async (d) => {
        await d.ensure();
        const v = await d.viewport({ transport: opts.transport as 'auto', capture: capture(opts) });
        const { describeView, viewportView } = await import('../app/helper-views.ts');
        const view = viewportView(v);
        return { json: { ok: true, ...view, viewport: v.viewport }, human: describeView.viewport(view) };
      });
    },
  );

  withCommon(
    device
      .command('gesture')
      .description(
        'Inject a gesture: tap X Y | long-press X Y | swipe X1 Y1 X2 Y2 | drag X1 Y1 X2 Y2 | pinch CX CY FROM TO | rotate CX CY R DEG0 DEG1 | plan FILE',
      )
      .argument('<kind>', 'tap, long-press, swipe, drag, pinch, rotate or plan')
      .argument('[args...]', 'coordinates, or the plan file'),
  )
    .option('--duration <ms>', 'gesture duration in ms')
    .action(async (kind: string, args: string[], opts: CommonOptions) => {
      const plan = await buildPlan(
        kind,
        args,
        opts.duration === undefined ? undefined : num('--duration', opts.duration),
      );
      await withDriver(opts, async (d) => {
        await d.ensure();
        const g = await d.gesture(plan, { transport: opts.transport as 'auto', capture: capture(opts) });
        const { describeView, gestureView } = await import('../app/helper-views.ts');
        const view = gestureView(g);
        return { json: { ok: true, ...view, result: g.result }, human: describeView.gesture(view) };
      });
    });
}

/** Build a touch plan from CLI words (also used by lease-bound gesture commands). */
export async function buildPlan(kind: string, args: string[], durationMs?: number): Promise<unknown> {
  const { gestureFromWords, planForGesture } = await import('../protocol/helper/gestures.ts');
  const { BridgeError } = await import('../errors.ts');
  try {
    if (kind === 'plan') {
      if (args.length !== 1) throw new UsageError('plan takes one file');
      const { parseStrictJson } = await import('../strict-json.ts');
      return parseStrictJson(await readInput(args[0]));
    }
    return planForGesture(
      gestureFromWords(
        kind,
        args.map((a, i) => num(`argument ${i + 1}`, a)),
        durationMs,
      ),
    );
  } catch (err) {
    if (err instanceof SyntaxError || (err instanceof BridgeError && err.code === 'INVALID_ARGUMENT')) {
      throw new UsageError(err.message);
    }
    throw err;
  }
}
