import type { Command } from 'commander';
import { BridgeError } from '../errors.ts';
import { isManifestKind, MANIFEST_KINDS } from '../manifest/index.ts';
import { EXIT_FAILURE, EXIT_USAGE, ExitCode, UsageError } from './exit.ts';

interface PublishOptions {
  apk?: string;
  jar?: string;
  kind?: string;
  version: string;
  name?: string;
  installArgs?: string;
  runner?: string;
  mainClass?: string;
  socketName?: string;
  devicePath?: string;
  serviceComponent?: string;
  store: string;
  json?: boolean;
}

const KIND_CHOICES = MANIFEST_KINDS;

export function registerRelease(program: Command): void {
  const release = program.command('release').description('Build, package and publish helper releases');
  release
    .command('publish')
    .description(
      'Publish a helper release (an APK, or a dex jar for app_process): verify its metadata, upload it, ' +
        'write its manifest, then move "latest"',
    )
    .option('--apk <file>', 'the APK to publish (kinds instrumentation-apk, accessibility-service-apk)')
    .option('--jar <file>', 'the dex jar to publish (kind app-process-jar; implies --kind app-process-jar)')
    .option(
      '--kind <kind>',
      `what the artifact is: ${KIND_CHOICES.join(', ')} (default: instrumentation-apk, or app-process-jar with --jar)`,
    )
    .requiredOption('--version <version>', 'release version (semver); must equal the APK versionName')
    .requiredOption(
      '--store <spec>',
      'file:DATA_DIR (what `serve --data-dir DATA_DIR` serves) or s3://BUCKET/PREFIX',
    )
    .option('--name <name>', 'helper name', 'android-snapshot-helper')
    .option('--install-args <args>', 'APK kinds: install arguments (default "install -r -t")')
    .option(
      '--runner <component>',
      "instrumentation runner pkg/.Class (default: the APK's only instrumentation)",
    )
    .option('--main-class <class>', 'app-process-jar: the class app_process starts (defined by the jar)')
    .option('--socket-name <name>', 'glass kinds: the localabstract socket the component listens on')
    .option(
      '--device-path <path>',
      'app-process-jar: where the jar goes (default /data/local/tmp/<name>.jar)',
    )
    .option(
      '--service-component <component>',
      "accessibility-service-apk: pkg/.Class (default: the APK's only accessibility service)",
    )
    .option('--json', 'print one JSON object')
    .action(async (opts: PublishOptions) => {
      const { access, stat } = await import('node:fs/promises');
      const { constants } = await import('node:fs');
      const { loadConfig } = await import('../config.ts');
      const { openArtifactStore, storeSpecFromConfig } = await import('../artifacts/open-store.ts');
      const { ReleaseService } = await import('../app/release-service.ts');

      if ((opts.apk === undefined) === (opts.jar === undefined)) {
        throw new UsageError('give exactly one of --apk <file> and --jar <file>');
      }
      const kind = opts.kind ?? (opts.jar === undefined ? 'instrumentation-apk' : 'app-process-jar');
      if (!isManifestKind(kind)) {
        throw new UsageError(`--kind must be one of ${KIND_CHOICES.join(', ')}, got ${JSON.stringify(kind)}`);
      }
      if ((kind === 'app-process-jar') !== (opts.jar !== undefined)) {
        throw new UsageError(
          kind === 'app-process-jar'
            ? '--kind app-process-jar publishes a --jar'
            : `--kind ${kind} publishes an --apk`,
        );
      }
      const flag = opts.jar === undefined ? '--apk' : '--jar';
      const file = (opts.jar ?? opts.apk) as string;
      // A regular file only: /dev/zero, a FIFO or a directory would hang or fail deep inside.
      // (stat, not open: opening a FIFO would block until a writer appears.)
      const st = await stat(file).catch(() => null);
      if (st === null) throw new UsageError(`${flag}: cannot read ${file}`);
      if (!st.isFile()) throw new UsageError(`${flag}: ${file} is not a regular file`);
      try {
        await access(file, constants.R_OK);
      } catch {
        throw new UsageError(`${flag}: cannot read ${file}`);
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
        // The same use case as `POST /v1/helpers/{name}/releases`.
        const result = await new ReleaseService({ store }).publish({
          apkPath: file,
          version: opts.version,
          kind,
          ...(opts.name === undefined ? {} : { name: opts.name }),
          ...(opts.installArgs === undefined ? {} : { installArgs: opts.installArgs }),
          ...(opts.runner === undefined ? {} : { runner: opts.runner }),
          ...(opts.mainClass === undefined ? {} : { mainClass: opts.mainClass }),
          ...(opts.socketName === undefined ? {} : { socketName: opts.socketName }),
          ...(opts.devicePath === undefined ? {} : { devicePath: opts.devicePath }),
          ...(opts.serviceComponent === undefined ? {} : { serviceComponent: opts.serviceComponent }),
          ...(progress ? { onProgress: progress.update } : {}),
        });
        progress?.stop();
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ ok: true, ...result, store: store.description })}\n`);
        } else {
          const m = result.manifest;
          const verb = result.status === 'published' ? 'published' : 'already published (identical bytes)';
          const what =
            m.kind === 'app-process-jar'
              ? `dex jar, main class ${m.mainClass}`
              : `${m.packageName} versionCode ${m.versionCode}`;
          process.stdout.write(
            `${verb}: ${m.name} ${m.version} (${what})\n` +
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
