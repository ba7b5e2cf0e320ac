/**
 * ensureHelper: make the helper of a release manifest installed and identical on a device.
 *
 * Reads the installed versionCode (`cmd package list packages --show-versioncode PKG`, falling back
 * to `dumpsys package PKG`); on an equal versionCode it verifies identity by hashing the installed
 * APK on the device (`pm path` + `sha256sum`). Installs push the sha256-verified APK from the
 * artifact cache and run `pm <installArgs> <path>` with the manifest's installArgs validated again
 * right here. A verdict is cached per (device, package, versionCode, sha256) so a warm ensure costs
 * one shell round trip.
 */
import { installFailedError } from '../../adb/errors.ts';
import { quoteShellArg, shellCommand } from '../../adb/shell-quote.ts';
import { assertInstallArgs, type InstallableApkManifest } from '../../manifest/index.ts';
import {
  parseDumpsysVersion,
  parseListPackagesVersion,
  parsePmInstallOutput,
  parsePmPath,
  parseSha256sum,
  REINSTALLABLE_FAILURES,
} from '../../protocol/helper/package-manager.ts';
import type { HelperDevice } from './device.ts';

export type EnsurePolicy = 'missing-or-outdated' | 'always' | 'never';

export type EnsureOutcome =
  | { before: 'missing'; action: 'installed' }
  | { before: 'outdated'; action: 'updated' }
  | { before: 'current'; action: 'none' }
  | { before: 'mismatched'; action: 'reinstalled' }
  | { before: 'missing' | 'outdated' | 'mismatched'; action: 'none' }
  | { before: 'current'; action: 'reinstalled' };

export type EnsureResult = EnsureOutcome & {
  serial: string;
  packageName: string;
  versionCode: number;
  sha256: string;
  /** The installed versionCode before, or null when missing. */
  installedVersionCode: number | null;
  /** An incompatible signer was replaced by uninstalling first. */
  uninstalledFirst: boolean;
  /** How many shell round trips the ensure cost. */
  roundTrips: number;
  durationMs: number;
};

export interface EnsureOptions {
  policy?: EnsurePolicy;
  /** Uninstall and retry once on INSTALL_FAILED_UPDATE_INCOMPATIBLE / VERSION_DOWNGRADE (default true). */
  uninstallOnIncompatible?: boolean;
  /** Resolve the verified local APK file (from the artifact cache) only when an install is needed. */
  apk: () => Promise<string>;
  signal?: AbortSignal;
}

/** Per-node verdict cache: a cache that can be lost, keyed by (serial, package, versionCode, sha256). */
export class EnsureVerdicts {
  readonly #current = new Set<string>();
  static key(serial: string, m: InstallableApkManifest): string {
    return `${serial}|${m.packageName}|${m.versionCode}|${m.sha256}`;
  }
  has(serial: string, m: InstallableApkManifest): boolean {
    return this.#current.has(EnsureVerdicts.key(serial, m));
  }
  set(serial: string, m: InstallableApkManifest): void {
    this.#current.add(EnsureVerdicts.key(serial, m));
  }
  forget(serial: string, packageName?: string): void {
    for (const k of this.#current) {
      const [s, p] = k.split('|');
      if (s === serial && (packageName === undefined || p === packageName)) this.#current.delete(k);
    }
  }
}

const ROUND_TRIP_TIMEOUT = 20_000;

async function installedVersion(
  device: HelperDevice,
  pkg: string,
  signal?: AbortSignal,
): Promise<{ vc: number | null; trips: number }> {
  const list = await device.shell(
    `${shellCommand('cmd', 'package', 'list', 'packages', '--show-versioncode', pkg)} 2>/dev/null`,
    {
      timeoutMs: ROUND_TRIP_TIMEOUT,
      signal,
    },
  );
  if (list.exitCode === 0) return { vc: parseListPackagesVersion(list.stdout.toString(), pkg), trips: 1 };
  const dump = await device.shell(shellCommand('dumpsys', 'package', pkg), {
    timeoutMs: ROUND_TRIP_TIMEOUT,
    signal,
  });
  return { vc: parseDumpsysVersion(dump.stdout.toString(), pkg), trips: 2 };
}

/** The sha256 of the APK installed for `pkg` (`pm path` + `sha256sum`), or null when not installed. */
export async function installedSha256(
  device: HelperDevice,
  pkg: string,
  signal?: AbortSignal,
): Promise<string | null> {
  const path = await device.shell(shellCommand('pm', 'path', pkg), { timeoutMs: ROUND_TRIP_TIMEOUT, signal });
  const apk = parsePmPath(path.stdout.toString());
  if (!apk) return null;
  const sum = await device.shell(shellCommand('sha256sum', apk), { timeoutMs: ROUND_TRIP_TIMEOUT, signal });
  return parseSha256sum(sum.stdout.toString());
}

/**
 * Push a sha256-verified local APK and run `pm <installArgs> <path>` (installArgs validated again
 * here); on an incompatible signer or a downgrade, uninstall and retry once unless the caller says
 * not to. A refusal is HELPER_INSTALL_FAILED naming pm's failure code. The caller holds the lock.
 */
export async function install(
  device: HelperDevice,
  manifest: Pick<InstallableApkManifest, 'installArgs' | 'sha256' | 'packageName'>,
  localApk: string,
  options: Pick<EnsureOptions, 'signal' | 'uninstallOnIncompatible'>,
): Promise<{ uninstalledFirst: boolean; trips: number }> {
  // installArgs are validated again right before use; the APK path is appended.
  const args = assertInstallArgs(manifest.installArgs);
  const remote = `/data/local/tmp/devicebridge-${manifest.sha256.slice(0, 16)}.apk`;
  await device.push(localApk, remote, { timeoutMs: 120_000, signal: options.signal });
  let trips = 1;
  const run = async () => {
    trips += 1;
    const r = await device.shell(`pm ${args.map(quoteShellArg).join(' ')} ${quoteShellArg(remote)}`, {
      timeoutMs: 120_000,
      signal: options.signal,
    });
    return parsePmInstallOutput(`${r.stdout.toString()}\n${r.stderr.toString()}`);
  };
  try {
    let result = await run();
    let uninstalledFirst = false;
    if (!result.ok && REINSTALLABLE_FAILURES.has(result.code) && (options.uninstallOnIncompatible ?? true)) {
      trips += 1;
      await device.shell(shellCommand('pm', 'uninstall', manifest.packageName), {
        timeoutMs: 60_000,
        signal: options.signal,
      });
      uninstalledFirst = true;
      result = await run();
    }
    if (!result.ok) throw installFailedError(result, device.serial, manifest.packageName);
    return { uninstalledFirst, trips };
  } finally {
    await device
      .shell(shellCommand('rm', '-f', remote), { timeoutMs: ROUND_TRIP_TIMEOUT })
      .catch(() => undefined);
  }
}

export async function ensureHelper(
  device: HelperDevice,
  manifest: InstallableApkManifest,
  verdicts: EnsureVerdicts,
  options: EnsureOptions,
): Promise<EnsureResult> {
  const started = performance.now();
  const policy = options.policy ?? 'missing-or-outdated';
  assertInstallArgs(manifest.installArgs);
  const pkg = manifest.packageName;
  // The write lock is never held past the caller's deadline; the lock's signal (aborted with the
  // caller's, or when the lock's own bound passes) cancels the adb calls made under it.
  const deadline = options.signal ? { signal: options.signal } : {};
  return device.locks.withWrite(device.serial, (signal) => locked({ ...options, signal }), deadline);

  async function locked(options: EnsureOptions): Promise<EnsureResult> {
    const base = {
      serial: device.serial,
      packageName: pkg,
      versionCode: manifest.versionCode,
      sha256: manifest.sha256,
    };
    const finish = (
      outcome: EnsureOutcome,
      extra: { installedVersionCode: number | null; uninstalledFirst?: boolean; roundTrips: number },
    ) =>
      ({
        ...outcome,
        ...base,
        installedVersionCode: extra.installedVersionCode,
        uninstalledFirst: extra.uninstalledFirst ?? false,
        roundTrips: extra.roundTrips,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
      }) as EnsureResult;

    const { vc, trips } = await installedVersion(device, pkg, options.signal);
    let roundTrips = trips;
    // Warm path: the cached verdict holds while the versionCode is unchanged.
    if (policy !== 'always' && vc === manifest.versionCode && verdicts.has(device.serial, manifest)) {
      return finish({ before: 'current', action: 'none' }, { installedVersionCode: vc, roundTrips });
    }
    verdicts.forget(device.serial, pkg);

    let before: 'missing' | 'outdated' | 'current' | 'mismatched';
    if (vc === null) before = 'missing';
    else if (vc < manifest.versionCode) before = 'outdated';
    else if (vc > manifest.versionCode) before = 'mismatched';
    else {
      const sha = await installedSha256(device, pkg, options.signal);
      roundTrips += 2;
      before = sha === manifest.sha256 ? 'current' : 'mismatched';
    }

    if (policy === 'never' || (before === 'current' && policy !== 'always')) {
      if (before === 'current') verdicts.set(device.serial, manifest);
      return finish({ before, action: 'none' } as EnsureOutcome, { installedVersionCode: vc, roundTrips });
    }
    const apk = await options.apk();
    const done = await install(device, manifest, apk, options);
    verdicts.set(device.serial, manifest);
    const action = before === 'missing' ? 'installed' : before === 'outdated' ? 'updated' : 'reinstalled';
    return finish({ before, action } as EnsureOutcome, {
      installedVersionCode: vc,
      uninstalledFirst: done.uninstalledFirst,
      roundTrips: roundTrips + done.trips,
    });
  }
}
