/**
 * Farm commands of a lease (issue 14) over the HTTP API (env DEVICEBRIDGE_URL, DEVICEBRIDGE_TOKEN):
 *   devicebridge shell --lease ID [--command LINE] [--timeout MS] [--max-output BYTES] [--json] -- ARGV…
 *   devicebridge shell --stream --lease ID [--command LINE] [--timeout MS] [--json] -- ARGV…
 *   devicebridge app install --lease ID (FILE.apk | --sha256 HEX) [--install-args "install -r -t"] [--keep]
 *   devicebridge app list --lease ID
 *   devicebridge app launch --lease ID PACKAGE [--component PKG/.Class]
 *   devicebridge app stop|clear|uninstall --lease ID PACKAGE
 *   devicebridge logcat --lease ID [--level L] [--tag T] [--pid N] [--since MS] [--json]
 * `shell` prints the command's stdout and stderr as they came and exits with its exit status (with
 * --json: one JSON object, and the same exit status); bridge failures exit 1, invalid input 2.
 * `shell --stream` prints the output as it comes (with --json: one JSON event per line, data in
 * base64), reading at the terminal's pace, and exits with the command's status the same way.
 */

import { once } from 'node:events';
import { readFile, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { parseInstallArgsString } from '../manifest/install-args.ts';
import { ExitCode, UsageError } from './exit.ts';
import { intFlag } from './input.ts';
import { type ClientFlags, callBridge, client, common, run } from './lease.ts';

export function registerFarm(program: Command): void {
  registerShell(program);
  registerApp(program);
  registerLogcat(program);
}

function registerShell(program: Command): void {
  common(
    program
      .command('shell')
      .description('Run one command on a leased device (needs the shell token capability)')
      .argument('[argv...]', 'the command and its arguments (after --), each quoted by the bridge'),
  )
    .requiredOption('--lease <id>', 'the lease')
    .option('--command <line>', 'a shell command line run as given, instead of ARGV')
    .option('--timeout <ms>', 'deadline of the command in ms (default 30000)')
    .option('--max-output <bytes>', 'cap of stdout and of stderr each (default 1 MiB)')
    .option('--stream', 'print the output as it comes (no cap), until the command exits')
    .action(
      async (
        argv: string[],
        opts: ClientFlags & {
          lease: string;
          command?: string;
          timeout?: string;
          maxOutput?: string;
          stream?: boolean;
        },
      ) => {
        if (argv.length > 0 === (opts.command !== undefined)) {
          throw new UsageError('give the command as ARGV after -- or as --command LINE (one of them)');
        }
        const timeoutMs = intFlag('--timeout', opts.timeout, 7);
        const maxOutputBytes = intFlag('--max-output', opts.maxOutput, 8);
        if (opts.stream && maxOutputBytes !== undefined)
          throw new UsageError('--max-output does not apply to --stream (the output is not collected)');
        const c = await client(opts);
        if (opts.stream) {
          const request = {
            ...(opts.command === undefined ? { argv } : { command: opts.command }),
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
          };
          const code = await callBridge(opts, () => streamShell(c, opts.lease, request, opts.json === true));
          if (code !== 0) throw new ExitCode(code);
          return;
        }
        const result = await callBridge(opts, () =>
          c.shell(opts.lease, {
            ...(opts.command === undefined ? { argv } : { command: opts.command }),
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
            ...(maxOutputBytes === undefined ? {} : { maxOutputBytes }),
          }),
        );
        if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else {
          process.stdout.write(result.stdout);
          process.stderr.write(result.stderr);
          if (result.truncated)
            process.stderr.write(
              'devicebridge: output cut at --max-output bytes; the command was stopped there (raise --max-output, or use --stream)\n',
            );
        }
        // Stopped at the cap: its status is unknown, so not a success.
        if (result.exitCode === null) throw new ExitCode(1);
        if (result.exitCode !== 0) throw new ExitCode(result.exitCode);
      },
    );
}

/** Write at the pace of the terminal or pipe (the bridge pauses the device meanwhile). */
async function writeOut(out: NodeJS.WriteStream, data: Uint8Array | string): Promise<void> {
  if (!out.write(data)) await once(out, 'drain');
}

/** `shell --stream`: print the events' output as it comes; resolves the exit status. */
async function streamShell(
  c: Awaited<ReturnType<typeof client>>,
  lease: string,
  request: { argv?: string[]; command?: string; timeoutMs?: number },
  json: boolean,
): Promise<number> {
  for await (const event of c.shellStream(lease, request)) {
    if ('exit' in event) {
      if (json) await writeOut(process.stdout, `${JSON.stringify(event)}\n`);
      return event.exit;
    }
    if (json) {
      const data = Buffer.from(event.data).toString('base64');
      await writeOut(process.stdout, `${JSON.stringify({ stream: event.stream, data })}\n`);
    } else await writeOut(event.stream === 'stdout' ? process.stdout : process.stderr, event.data);
  }
  return 0;
}

type LeaseFlags = ClientFlags & { lease: string };

/** A local APK to upload: a regular file, read whole (the bridge caps uploads). */
async function apkBytes(file: string): Promise<Uint8Array> {
  const info = await stat(file).catch(() => null);
  if (info === null || !info.isFile())
    throw new UsageError(`${JSON.stringify(file)} is not a readable regular file`);
  return readFile(file);
}

function registerApp(program: Command): void {
  const app = program.command('app').description('The app under test on a leased device');
  const leased = (cmd: Command) => common(cmd).requiredOption('--lease <id>', 'the lease');

  leased(app.command('install').description('Install an APK (uploaded) or a published artifact (--sha256)'))
    .argument('[file]', 'the APK to upload')
    .option('--sha256 <hex>', 'an artifact published on the bridge, instead of FILE')
    .option('--install-args <args>', 'pm install arguments (allowlist: install -r -t -d -g)')
    .option('--keep', 'leave the app installed when the lease ends')
    .action(
      async (
        file: string | undefined,
        opts: LeaseFlags & { sha256?: string; installArgs?: string; keep?: boolean },
      ) => {
        if ((file === undefined) === (opts.sha256 === undefined)) {
          throw new UsageError('give the APK FILE or --sha256 HEX (one of them)');
        }
        const installArgs =
          opts.installArgs === undefined ? undefined : parseInstallArgsString(opts.installArgs);
        const options = { ...(installArgs ? { installArgs } : {}), ...(opts.keep ? { keep: true } : {}) };
        const source =
          file === undefined ? { sha256: opts.sha256 as string, ...options } : await apkBytes(file);
        const c = await client(opts);
        await run(
          opts,
          () => c.installApp(opts.lease, source, options),
          (a) =>
            `installed ${a.packageName} ${a.versionName ?? ''} (versionCode ${a.versionCode}, sha256 ${a.sha256})`,
        );
      },
    );

  leased(app.command('list').description('The apps installed during the lease')).action(
    async (opts: LeaseFlags) => {
      const c = await client(opts);
      await run(
        opts,
        () => c.listApps(opts.lease),
        (l) =>
          l.apps
            .map((a) => `${a.packageName}\t${a.versionCode}\t${a.keep ? 'kept' : 'uninstalled at release'}`)
            .join('\n'),
      );
    },
  );

  leased(app.command('launch').description('Start the launcher activity (or --component)'))
    .argument('<package>', 'the package')
    .option('--component <pkg/.Class>', 'the activity to start')
    .action(async (pkg: string, opts: LeaseFlags & { component?: string }) => {
      const c = await client(opts);
      await run(
        opts,
        () => c.appAction(opts.lease, pkg, 'launch', opts.component),
        (r) => `launched ${r.component ?? r.packageName}`,
      );
    });

  for (const action of ['stop', 'clear', 'uninstall'] as const) {
    const what = { stop: 'Force-stop an app', clear: "Clear an app's data", uninstall: 'Uninstall an app' }[
      action
    ];
    leased(app.command(action).description(what))
      .argument('<package>', 'the package')
      .action(async (pkg: string, opts: LeaseFlags) => {
        const c = await client(opts);
        await run(
          opts,
          () =>
            action === 'uninstall' ? c.uninstallApp(opts.lease, pkg) : c.appAction(opts.lease, pkg, action),
          (r) => `${action}: ${r.packageName}`,
        );
      });
  }
}

const LEVELS = ['V', 'D', 'I', 'W', 'E', 'F'] as const;

/** `logcat`: one line per entry (`--json`: the entry as JSON) until the lease ends. */
function registerLogcat(program: Command): void {
  common(program.command('logcat').description("Stream a leased device's logcat until the lease ends"))
    .requiredOption('--lease <id>', 'the lease')
    .option('--level <L>', 'the lowest level shown: V D I W E F')
    .option('--tag <tag>', 'only this tag')
    .option('--pid <n>', 'only this process')
    .option('--since <ms>', 'only entries at or after this time (ms since the epoch)')
    .action(async (opts: LeaseFlags & { level?: string; tag?: string; pid?: string; since?: string }) => {
      const level = opts.level?.toUpperCase();
      if (level !== undefined && !(LEVELS as readonly string[]).includes(level)) {
        throw new UsageError(`--level must be one of ${LEVELS.join(' ')}, got ${JSON.stringify(opts.level)}`);
      }
      const pid = intFlag('--pid', opts.pid, 7);
      const since = intFlag('--since', opts.since, 15);
      const c = await client(opts);
      await callBridge(opts, async () => {
        const query = {
          ...(level === undefined ? {} : { level: level as (typeof LEVELS)[number] }),
          ...(opts.tag === undefined ? {} : { tag: opts.tag }),
          ...(pid === undefined ? {} : { pid }),
          ...(since === undefined ? {} : { since }),
        };
        for await (const e of c.logcat(opts.lease, query)) {
          const line = opts.json
            ? JSON.stringify(e)
            : `${new Date(e.time).toISOString()} ${e.pid} ${e.tid} ${e.level} ${e.tag}: ${e.message}`;
          if (!process.stdout.write(`${line}\n`)) await new Promise((r) => process.stdout.once('drain', r));
        }
      });
    });
}
