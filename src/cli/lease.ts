/**
 * Lease-bound commands over the HTTP API (env DEVICEBRIDGE_URL, DEVICEBRIDGE_TOKEN):
 *   devicebridge lease acquire|renew|release|list|waiters
 *   devicebridge snapshot --lease ID [--format json|xml]      (registered on the snapshot group)
 *   devicebridge gesture --lease ID tap X Y | swipe ... | ...  (registered on the gesture group)
 * Exit codes: 0 ok, 1 failure reported by the bridge, 2 usage or invalid input (400s).
 */
import type { Command } from 'commander';
import { errorLine, jsonErrorLine } from './error-line.ts';
import { EXIT_FAILURE, EXIT_USAGE, ExitCode, UsageError } from './exit.ts';
import { intFlag } from './input.ts';

export interface ClientFlags {
  url?: string;
  token?: string;
  json?: boolean;
}

export async function client(flags: ClientFlags) {
  const { BridgeClientError, DeviceBridgeClient, parseBridgeUrl } = await import('../client/index.ts');
  try {
    return new DeviceBridgeClient({
      ...(flags.url ? { baseUrl: parseBridgeUrl(flags.url, '--url') } : {}),
      ...(flags.token ? { token: flags.token } : {}),
    });
  } catch (err) {
    if (err instanceof BridgeClientError) throw new UsageError(err.message);
    throw err;
  }
}

/** Run a client call; print JSON or human output; map errors to exit codes. */
export async function run<T>(
  flags: ClientFlags,
  call: () => Promise<T>,
  human: (value: T) => string,
): Promise<void> {
  const value = await callBridge(flags, call);
  process.stdout.write(flags.json ? `${JSON.stringify(value ?? { ok: true })}\n` : `${human(value)}\n`);
}

/** Run a client call; map its errors to the documented exit codes (printed, as JSON too with --json). */
export async function callBridge<T>(flags: ClientFlags, call: () => Promise<T>): Promise<T> {
  const { BridgeClientError } = await import('../client/index.ts');
  try {
    return await call();
  } catch (err) {
    if (err instanceof BridgeClientError) {
      if (flags.json) {
        process.stdout.write(
          `${jsonErrorLine(err.code, err.message, err.retryable, {
            status: err.status,
            requestId: err.requestId,
            ...(err.details ? { details: err.details } : {}),
          })}\n`,
        );
      }
      process.stderr.write(
        `devicebridge: ${err.code}: ${err.message}${err.requestId ? ` (request ${err.requestId})` : ''}\n`,
      );
      throw new ExitCode(err.status === 400 ? EXIT_USAGE : EXIT_FAILURE);
    }
    if (err instanceof TypeError && /fetch failed/.test(err.message)) {
      const message = `cannot reach the bridge: ${(err.cause as Error | undefined)?.message ?? err.message}`;
      if (flags.json) process.stdout.write(`${jsonErrorLine('UNAVAILABLE', message, true)}\n`);
      process.stderr.write(`${errorLine(message)}\n`);
      throw new ExitCode(EXIT_FAILURE);
    }
    throw err;
  }
}

/** The flags every command over the HTTP API takes: --url, --token, --json. */
export function common(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'bridge URL (env DEVICEBRIDGE_URL, default http://127.0.0.1:7100)')
    .option('--token <token>', 'bearer token (env DEVICEBRIDGE_TOKEN)')
    .option('--json', 'print one JSON object');
}

/** Lease flags (seconds, SDK levels) have at most 7 digits. */
export const int = (flag: string, value: string | undefined) => intFlag(flag, value, 7);

/** How long one request of `lease acquire --wait` waits before it resumes with a new one. */
const DEFAULT_POLL_SECONDS = 20;
/** How often a waiting `lease acquire` says where it stands (stderr). */
const PROGRESS_MS = 2000;

type Client = Awaited<ReturnType<typeof client>>;

/**
 * `lease acquire --wait`: the re-poll protocol. Every request waits at most `pollSeconds` under one
 * waiter id of this process; a request that ends without a device (409 CONFLICT) keeps the place in
 * the queue, and the next request with the same id resumes it, until `waitSeconds` have passed. No
 * single request outlives a load balancer's idle timeout. Meanwhile (unless `progress` is off) the
 * place in the queue and the time waited are written to stderr every 2 s (GET /v1/waiters).
 */
async function acquireWaiting(
  c: Client,
  body: Parameters<Client['acquireLease']>[0],
  options: { waitSeconds: number; pollSeconds: number; progress: boolean },
) {
  const { BridgeClientError } = await import('../client/index.ts');
  const { randomBytes } = await import('node:crypto');
  const waiterId = `waiter_${randomBytes(16).toString('base64url')}`;
  const started = Date.now();
  const deadline = started + options.waitSeconds * 1000;
  let said = '';
  const tell = async () => {
    const mine = (await c.listWaiters().catch(() => null))?.waiters.find((w) => w.waiterId === waiterId);
    const place = mine === undefined ? 'in the queue' : `position ${mine.position} in the queue`;
    said = `waiting for a device: ${place}, ${Math.round((Date.now() - started) / 1000)}s elapsed`;
    process.stderr.write(`${said}\n`);
  };
  const ticker = options.progress ? setInterval(() => void tell(), PROGRESS_MS) : undefined;
  try {
    for (;;) {
      const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      try {
        return await c.acquireLease({ ...body, waitSeconds: Math.min(options.pollSeconds, left), waiterId });
      } catch (err) {
        const retry =
          err instanceof BridgeClientError && err.code === 'CONFLICT' && left > options.pollSeconds;
        if (!retry) throw err;
      }
    }
  } finally {
    clearInterval(ticker);
    if (said !== '') process.stderr.write('waiting ended\n');
  }
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function registerLease(program: Command): void {
  const lease = program.command('lease').description('Device leases (through the bridge HTTP API)');

  common(lease.command('acquire').description('Lease a device matching the selector'))
    .option('--label <key=value>', 'required label (repeatable)', collect)
    .option('--device <id>', 'a specific device id')
    .option('--sdk-min <n>', 'minimum SDK level')
    .option('--sdk-max <n>', 'maximum SDK level')
    .option('--ttl <seconds>', 'lease TTL (default 300, max 3600)')
    .option('--wait <seconds>', 'wait in the queue up to this long for a device to free')
    .option('--keep-apps', 'leave the apps installed during the lease installed when it ends')
    .option(
      '--poll <seconds>',
      'with --wait: each request waits at most this long, then resumes its queue place (keep under your load balancer idle timeout)',
      String(DEFAULT_POLL_SECONDS),
    )
    .action(
      async (
        opts: ClientFlags & {
          label?: string[];
          device?: string;
          sdkMin?: string;
          sdkMax?: string;
          ttl?: string;
          wait?: string;
          keepApps?: boolean;
          poll: string;
        },
      ) => {
        const labels: Record<string, string> = {};
        for (const l of opts.label ?? []) {
          const eq = l.indexOf('=');
          if (eq <= 0) throw new UsageError(`--label must be key=value, got ${JSON.stringify(l)}`);
          labels[l.slice(0, eq)] = l.slice(eq + 1);
        }
        const sdkMin = int('--sdk-min', opts.sdkMin);
        const sdkMax = int('--sdk-max', opts.sdkMax);
        const ttlSeconds = int('--ttl', opts.ttl);
        const waitSeconds = int('--wait', opts.wait);
        const pollSeconds = int('--poll', opts.poll) ?? DEFAULT_POLL_SECONDS;
        if (pollSeconds < 1) throw new UsageError('--poll must be at least 1 second');
        const c = await client(opts);
        const body = {
          selector: {
            ...(Object.keys(labels).length ? { labels } : {}),
            ...(opts.device ? { deviceId: opts.device } : {}),
            ...(sdkMin === undefined ? {} : { sdkMin }),
            ...(sdkMax === undefined ? {} : { sdkMax }),
          },
          ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
          ...(opts.keepApps ? { keepApps: true } : {}),
        };
        await run(
          opts,
          () =>
            waitSeconds === undefined || waitSeconds === 0
              ? c.acquireLease({ ...body, ...(waitSeconds === undefined ? {} : { waitSeconds }) })
              : acquireWaiting(c, body, { waitSeconds, pollSeconds, progress: !opts.json }),
          (l) =>
            `${l.id} on ${l.deviceId} until ${new Date(l.expiresAt).toISOString()} (fencing token ${l.fencingToken})`,
        );
      },
    );

  common(lease.command('renew').description('Extend a lease').argument('<id>', 'lease id'))
    .option('--ttl <seconds>', 'new TTL from now')
    .action(async (id: string, opts: ClientFlags & { ttl?: string }) => {
      const ttl = int('--ttl', opts.ttl);
      const c = await client(opts);
      await run(
        opts,
        () => c.renewLease(id, ttl),
        (l) => `${l.id} renewed until ${new Date(l.expiresAt).toISOString()}`,
      );
    });

  common(
    lease
      .command('release')
      .description('Release a lease (tears down its helper state)')
      .argument('<id>', 'lease id'),
  ).action(async (id: string, opts: ClientFlags) => {
    const c = await client(opts);
    const { BridgeClientError } = await import('../client/index.ts');
    await run(
      opts,
      async () => {
        try {
          return { ...(await c.releaseLease(id)), alreadyEnded: false };
        } catch (err) {
          // Released (or expired) already: the goal is reached; say so quietly and succeed.
          if (!(err instanceof BridgeClientError) || err.code !== 'LEASE_EXPIRED') throw err;
          return {
            lease: await c.getLease(id),
            teardown: null,
            teardownPending: undefined,
            alreadyEnded: true,
          };
        }
      },
      (r) =>
        r.alreadyEnded
          ? `${r.lease.id} already ${r.lease.state}`
          : r.teardown === null
            ? `${r.lease.id} released; teardown still running after ${Math.round((r.teardownPending?.waitedMs ?? 0) / 1000)} s (the device stays blocked until it ends; its record will be in GET /v1/teardowns)`
            : `${r.lease.id} released; teardown: ${r.teardown.actions.join(', ') || 'nothing to undo'}${r.teardown.failures.length ? `; FAILED: ${r.teardown.failures.join(', ')}` : ''}`,
    );
  });

  common(lease.command('list').description('Active leases of your tenant')).action(
    async (opts: ClientFlags) => {
      const c = await client(opts);
      await run(
        opts,
        () => c.listLeases(),
        (r) =>
          r.leases.length
            ? r.leases.map((l) => `${l.id}\t${l.deviceId}\t${new Date(l.expiresAt).toISOString()}`).join('\n')
            : 'no active leases',
      );
    },
  );
  registerWaiters(lease);
}

/** `devicebridge lease waiters`: who waits for a device, with the place in the queue. */
function registerWaiters(lease: Command): void {
  common(
    lease.command('waiters').description('Lease requests waiting for a device (your tenant; admins: all)'),
  ).action(async (opts: ClientFlags) => {
    const c = await client(opts);
    await run(
      opts,
      () => c.listWaiters(),
      (r) =>
        r.waiters.length
          ? r.waiters
              .map((w) =>
                [
                  w.waiterId,
                  `#${w.position}`,
                  `${Math.round(w.waitingMs / 1000)}s`,
                  w.tenant,
                  w.node,
                  JSON.stringify(w.selector),
                ].join('\t'),
              )
              .join('\n')
          : 'nobody is waiting',
    );
  });
}

/** `devicebridge devices list`: the devices every node of the fleet drives. */
export function registerDevices(program: Command): void {
  const devices = program.command('devices').description('Devices (through the bridge HTTP API)');
  registerDeviceAdmin(devices);
  common(
    devices
      .command('list')
      .description(
        'Every device: id, state, owner node, labels, and why a quarantined one is out of service',
      ),
  ).action(async (opts: ClientFlags) => {
    const c = await client(opts);
    await run(
      opts,
      () => c.listDevices(),
      (r) =>
        r.devices.length
          ? r.devices
              .map((d) =>
                [
                  d.id,
                  d.state,
                  d.ownerNode ?? '-',
                  Object.entries(d.labels ?? {})
                    .map(([k, v]) => `${k}=${v}`)
                    .join(',') || '-',
                  ...(d.state === 'quarantined'
                    ? [`quarantined: ${d.quarantineReason ?? 'no reason given'}`]
                    : []),
                ].join('\t'),
              )
              .join('\n')
          : 'no devices',
    );
  });
}

/** `devicebridge devices baseline ID` and `devices clear-quarantine ID` (admin). */
export function registerDeviceAdmin(devices: Command): void {
  common(
    devices
      .command('baseline')
      .description('Admin: record what the reset between tenants restores the device to (not while leased)')
      .argument('<id>', 'device id'),
  ).action(async (id: string, opts: ClientFlags) => {
    const c = await client(opts);
    await run(
      opts,
      () => c.recordDeviceBaseline(id),
      (d) =>
        d.baseline
          ? `${d.id}: baseline recorded: ${d.baseline.packages} packages, ${d.baseline.files} files and folders, ${d.baseline.settings} settings, ${d.baseline.processes} shell processes`
          : `${d.id}: no baseline`,
    );
  });
  common(
    devices
      .command('clear-quarantine')
      .description('Admin: put a quarantined device back into service')
      .argument('<id>', 'device id'),
  ).action(async (id: string, opts: ClientFlags) => {
    const c = await client(opts);
    await run(
      opts,
      () => c.clearDeviceQuarantine(id),
      (d) => `${d.id}: ${d.state}`,
    );
  });
}

/** `snapshot --lease ID [--format json|xml] [--transport ...]` on the snapshot group. */
export function addLeaseSnapshot(group: Command): void {
  common(group)
    .option('--lease <id>', 'lease to capture on')
    .option('--format <format>', 'json (normalized) | xml', 'json')
    .option('--transport <transport>', 'auto | session | one-shot', 'auto')
    .action(async (opts: ClientFlags & { lease?: string; format: string; transport: string }) => {
      if (!opts.lease) throw new UsageError('snapshot needs --lease ID (or a subcommand: normalize)');
      if (opts.format !== 'json' && opts.format !== 'xml')
        throw new UsageError('--format must be json or xml');
      if (!['auto', 'session', 'one-shot'].includes(opts.transport))
        throw new UsageError('--transport must be auto, session or one-shot');
      const c = await client(opts);
      await run(
        opts,
        () =>
          c.snapshot(opts.lease!, {
            format: opts.format as 'json' | 'xml',
            transport: opts.transport as 'auto',
          }),
        (s) => (s.format === 'xml' ? s.xml : JSON.stringify(s.snapshot, null, 2)),
      );
    });
}

/** `gesture --lease ID <kind> args...` on the gesture group. */
export function addLeaseGesture(group: Command): void {
  common(group)
    .option('--lease <id>', 'lease to act on')
    .option('--duration <ms>', 'gesture duration')
    .option('--transport <transport>', 'auto | session | one-shot', 'auto')
    .argument('[kind]', 'tap, long-press, swipe, drag, pinch, rotate or plan')
    .argument('[args...]', 'numbers, or a plan file')
    .action(
      async (
        kind: string | undefined,
        args: string[],
        opts: ClientFlags & { lease?: string; duration?: string; transport: string },
      ) => {
        if (!opts.lease || !kind)
          throw new UsageError('gesture needs --lease ID and a gesture (or a subcommand: validate)');
        const { buildPlan } = await import('./device.ts');
        const duration = opts.duration === undefined ? undefined : int('--duration', opts.duration);
        const plan = await buildPlan(kind, args, duration);
        const c = await client(opts);
        await run(
          opts,
          () => c.gesture(opts.lease!, { kind: 'plan', plan, transport: opts.transport as 'auto' }),
          // The gesture asked for: the helper classifies the plan it was sent (a tap is a short swipe).
          (g) => `${kind}: ${g.injectedEvents} events (${g.transport})`,
        );
      },
    );
}
