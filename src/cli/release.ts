import type { Command } from 'commander';
import { BridgeError } from '../errors.ts';
import { EXIT_FAILURE, EXIT_USAGE, ExitCode, UsageError } from './exit.ts';

interface PublishOptions {
  apk: string;
  version: string;
  name?: string;
  installArgs?: string;
  runner?: string;
  store: string;
  json?: boolean;
}

export function registerRelease(program: Command): void {
  const release = program.command('release').description('Build, package and publish helper releases');
  release
    .command('publish')
    .description(
      'Publish a helper APK: verify its metadata, upload it, write its manifest, then move "latest"',
    )
    .requiredOption('--apk <file>', 'the APK to publish')
    .requiredOption('--version <version>', 'release version (semver); must equal the APK versionName')
    .requiredOption(
      '--store <spec>',
      'file:DATA_DIR (what `serve --data-dir DATA_DIR` serves) or s3://BUCKET/PREFIX',
    )
    .option('--name <name>', 'helper name', 'android-snapshot-helper')
    .option('--install-args <args>', 'install arguments, e.g. "install -r -t"', 'install -r -t')
    .option(
      '--runner <component>',
      "instrumentation runner pkg/.Class (default: the APK's only instrumentation)",
    )
    .option('--json', 'print one JSON object')
    .action(async (opts: PublishOptions) => {
      const { access, stat } = await import('node:fs/promises');
      const { constants } = await import('node:fs');
      const { loadConfig } = await import('../config.ts');
      const { openArtifactStore, storeSpecFromConfig } = await import('../artifacts/open-store.ts');
      const { publishRelease } = await import('../releases/publish.ts');
      const { parseInstallArgsString } = await import('../manifest/index.ts');

      // A regular file only: /dev/zero, a FIFO or a directory would hang or fail deep inside.
      // (stat, not open: opening a FIFO would block until a writer appears.)
      const st = await stat(opts.apk).catch(() => null);
      if (st === null) throw new UsageError(`--apk: cannot read ${opts.apk}`);
      if (!st.isFile()) throw new UsageError(`--apk: ${opts.apk} is not a regular file`);
      try {
        await access(opts.apk, constants.R_OK);
      } catch {
        throw new UsageError(`--apk: cannot read ${opts.apk}`);
      }
      const config = loadConfig(process.env, {});
      // A file: store names the bridge's data directory; artifacts live under it as `serve` expects.
      let spec = opts.store;
      if (opts.store.startsWith('file:')) {
        const dataDir = opts.store.slice('file:'.length);
        // `file:` alone would silently mean ./artifacts: say which directory instead.
        if (dataDir.trim() === '') throw new UsageError('--store file: needs a directory, e.g. file:./var');
        spec = storeSpecFromConfig({ ...config, s3Bucket: undefined, dataDir });
      }
      if (!spec.startsWith('file:') && !spec.startsWith('s3://')) {
        throw new UsageError(
          `--store must be file:DATA_DIR or s3://BUCKET/PREFIX, got ${JSON.stringify(opts.store)}`,
        );
      }

      const progress = await makeProgress(!opts.json && process.stderr.isTTY === true);
      const store = openArtifactStore(spec, config);
      try {
        const result = await publishRelease(store, {
          apkPath: opts.apk,
          version: opts.version,
          ...(opts.name === undefined ? {} : { name: opts.name }),
          installArgs: parseInstallArgsString(opts.installArgs ?? 'install -r -t'),
          ...(opts.runner === undefined ? {} : { runner: opts.runner }),
          ...(progress ? { onProgress: progress.update } : {}),
        });
        progress?.stop();
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ ok: true, ...result, store: store.description })}\n`);
        } else {
          const m = result.manifest;
          const verb = result.status === 'published' ? 'published' : 'already published (identical bytes)';
          process.stdout.write(
            `${verb}: ${m.name} ${m.version} (${m.packageName} versionCode ${m.versionCode})\n` +
              `  sha256 ${m.sha256}\n  store  ${store.description}\n  latest ${result.latest ? 'yes' : 'no'}\n`,
          );
        }
      } catch (err) {
        progress?.stop();
        if (!(err instanceof BridgeError)) throw err;
        const usage = err.code === 'INVALID_ARGUMENT' || err.code === 'INSTALL_ARGS_REJECTED';
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ ok: false, error: err.toJSON() })}\n`);
        } else {
          const errors =
            (err.details?.['errors'] as Array<{ path: string; message: string }> | undefined) ?? [];
          process.stderr.write(
            `devicebridge: ${err.code}: ${err.message}\n${errors.map((e) => `  ${e.path}: ${e.message}\n`).join('')}`,
          );
        }
        throw new ExitCode(usage ? EXIT_USAGE : EXIT_FAILURE);
      } finally {
        await store.close();
      }
    });
}

async function makeProgress(enabled: boolean) {
  if (!enabled) return null;
  const { SingleBar, Presets } = await import('cli-progress');
  const bar = new SingleBar(
    { format: 'upload [{bar}] {percentage}% {value}/{total} bytes', stream: process.stderr },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update(sent: number, total: number) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(sent);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
