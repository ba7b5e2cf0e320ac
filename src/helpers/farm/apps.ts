/**
 * The app under test on a leased device (issue 14, capability 1): install a sha256-verified APK
 * with the installArgs allowlist through the ensure machinery's install step (no uninstall on a
 * signature conflict: pm's failure code is reported), verify the installed bytes by sha256 on the
 * device, launch (the launcher activity, or a given component), force-stop, clear data, uninstall.
 * Every package and component is checked by the one Java-name rule and quoted by the one quoting
 * function. Apps installed during a lease are journaled (`APP_JOURNAL_PREFIX` + package) so teardown
 * uninstalls them on whichever node runs it, also after a crash.
 */
import { shellCommand } from '../../adb/shell-quote.ts';
import { readApkInfo } from '../../artifacts/apk-file.ts';
import { BridgeError } from '../../errors.ts';
import { assertInstallArgs } from '../../manifest/install-args.ts';
import { isJavaComponent, isJavaPackageName } from '../../protocol/android/java-names.ts';
import type { HelperDevice } from '../snapshot/device.ts';
import { install, installedSha256 } from '../snapshot/ensure-helper.ts';

/** Journal key prefix of an app installed during a lease (the package name follows). */
export const APP_JOURNAL_PREFIX = 'farm.app:';

export const DEFAULT_APP_INSTALL_ARGS = ['install', '-r', '-t'];

/** An app installed during a lease. */
export interface LeaseApp {
  packageName: string;
  versionCode: number;
  versionName: string | null;
  /** null for a package installed outside the API (its bytes never passed the bridge). */
  sha256: string | null;
  /** ms since epoch; null when installed outside the API. */
  installedAt: number | null;
  /** Left installed at teardown (asked at install). */
  keep: boolean;
}

/** What teardown needs to uninstall an app (the journal record). */
export interface AppJournalRecord {
  serial: string;
  packageName: string;
  sha256: string;
  /** Left installed at teardown (the install's `keep` or the lease's `keepApps`), recorded as kept. */
  keep: boolean;
}

const STEP_MS = 60_000;

export function assertPackageName(value: string): string {
  if (!isJavaPackageName(value)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `not a package name: ${JSON.stringify(String(value).slice(0, 80))}`,
    );
  }
  return value;
}

/** Parse a journal record written by `journalRecord`; null when it is not one. */
export function parseAppJournalRecord(value: unknown): AppJournalRecord | null {
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  if (typeof r['serial'] !== 'string' || typeof r['sha256'] !== 'string') return null;
  if (!isJavaPackageName(r['packageName'])) return null;
  if (r['keep'] !== undefined && typeof r['keep'] !== 'boolean') return null;
  return {
    serial: r['serial'],
    packageName: r['packageName'],
    sha256: r['sha256'],
    keep: r['keep'] === true,
  };
}

/**
 * Install `apk` (a local file whose sha256 the caller verified) and verify the installed bytes.
 * Runs under the device's write lock (ensure takes the same one).
 */
export async function installApp(
  device: HelperDevice,
  apk: { path: string; sha256: string },
  options: {
    installArgs?: readonly string[];
    keep?: boolean;
    signal?: AbortSignal;
    /** Called with the package before anything reaches the device (the teardown journal). */
    beforeInstall?: (packageName: string) => Promise<void>;
  },
): Promise<LeaseApp> {
  const installArgs = assertInstallArgs(options.installArgs ?? DEFAULT_APP_INSTALL_ARGS);
  const info = await readApkInfo(apk.path);
  const packageName = info.packageName;
  await options.beforeInstall?.(packageName);
  const deadline = options.signal ? { signal: options.signal } : {};
  await device.locks.withWrite(
    device.serial,
    async (signal) => {
      await install(device, { packageName, installArgs, sha256: apk.sha256 }, apk.path, {
        signal,
        uninstallOnIncompatible: false,
      });
      const installed = await installedSha256(device, packageName, signal);
      if (installed !== apk.sha256) {
        throw new BridgeError(
          'CHECKSUM_MISMATCH',
          `${packageName} on ${device.serial}: the installed APK has sha256 ${installed ?? 'none'}, not ${apk.sha256}`,
          { details: { packageName, expected: apk.sha256, actual: installed } },
        );
      }
    },
    deadline,
  );
  return {
    packageName,
    versionCode: info.versionCode,
    versionName: info.versionName,
    sha256: apk.sha256,
    installedAt: Date.now(),
    keep: options.keep ?? false,
  };
}

/** An `am`/`pm` answer that reports a failure in its output (am exits 0 on some of them). */
function failed(text: string): string | null {
  const lines = text.split('\n').map((l) => l.trim());
  const line = lines.find((l) => /^(Error|Failure|Failed|Exception)\b|^java\.lang\./.test(l));
  if (line === undefined) return null;
  // `am start` prints "Error type 3" and then the reason ("Error: Activity class {…} does not exist."): both.
  if (/^Error type \d+$/.test(line)) {
    const reason = lines.find((l) => l.startsWith('Error: '));
    if (reason !== undefined) return `${line}: ${reason.slice('Error: '.length)}`;
  }
  return line;
}

async function run(device: HelperDevice, command: string, what: string, signal?: AbortSignal) {
  const r = await device.shell(command, { timeoutMs: STEP_MS, ...(signal ? { signal } : {}) });
  const text = `${r.stdout.toString()}\n${r.stderr.toString()}`;
  const failure = failed(text) ?? (r.exitCode === 0 ? null : `exit status ${r.exitCode}`);
  if (failure !== null) {
    throw new BridgeError('CONFLICT', `${what} on ${device.serial} failed: ${failure}`, {
      retryable: false,
      details: { serial: device.serial, exitCode: r.exitCode, output: text.trim().slice(0, 500) },
    });
  }
  return text;
}

/** `am start -W` of the package's launcher activity, or of `component` (pkg/.Class). */
export async function launchApp(
  device: HelperDevice,
  packageName: string,
  component: string | undefined,
  signal?: AbortSignal,
): Promise<{ component: string | null; output: string }> {
  assertPackageName(packageName);
  if (component !== undefined) {
    if (!isJavaComponent(component) || !component.startsWith(`${packageName}/`)) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `component must be ${packageName}/.Class or ${packageName}/full.Class, got ${JSON.stringify(component.slice(0, 120))}`,
      );
    }
  }
  const command =
    component === undefined
      ? shellCommand(
          'am',
          'start',
          '-W',
          '-a',
          'android.intent.action.MAIN',
          '-c',
          'android.intent.category.LAUNCHER',
          '-p',
          packageName,
        )
      : shellCommand('am', 'start', '-W', '-n', component);
  const output = await run(device, command, `launching ${component ?? packageName}`, signal);
  const cmp =
    /^Activity: (\S+)/m.exec(output)?.[1] ?? /cmp=(\S+?)[\s}]/.exec(output)?.[1] ?? component ?? null;
  return { component: cmp, output: output.trim() };
}

export async function stopApp(
  device: HelperDevice,
  packageName: string,
  signal?: AbortSignal,
): Promise<void> {
  await run(
    device,
    shellCommand('am', 'force-stop', assertPackageName(packageName)),
    `stopping ${packageName}`,
    signal,
  );
}

export async function clearApp(
  device: HelperDevice,
  packageName: string,
  signal?: AbortSignal,
): Promise<void> {
  await run(
    device,
    shellCommand('pm', 'clear', assertPackageName(packageName)),
    `clearing ${packageName}`,
    signal,
  );
}

export async function uninstallApp(
  device: HelperDevice,
  packageName: string,
  signal?: AbortSignal,
): Promise<void> {
  assertPackageName(packageName);
  await device.locks.withWrite(
    device.serial,
    (lockSignal) =>
      run(device, shellCommand('pm', 'uninstall', packageName), `uninstalling ${packageName}`, lockSignal),
    signal ? { signal } : {},
  );
}
