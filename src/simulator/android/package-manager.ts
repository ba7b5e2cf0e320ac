/**
 * The emulated package manager. Installs parse the real APK (`parseApkInfo`) and apply Android 14's
 * rules and `Failure [CODE: message]` wording; installed APK bytes live in the file system under
 * `/data/app/~~<random>==/<pkg>-<random>==/base.apk`. Installs and uninstalls are serialised per
 * device, as PackageManagerService does.
 */
import { createHash } from 'node:crypto';
import { parseApkInfo } from '../../protocol/apk/apk-reader.ts';
import type { Faults, InstalledPackage, PreinstalledPackage } from '../types.ts';
import { type MemoryFileSystem, normalizePath } from './fs.ts';

export interface PackageRecord extends InstalledPackage {
  minSdk: number | null;
  targetSdk: number | null;
  debuggable: boolean;
  /** Preinstalled on the system image (cannot be uninstalled). */
  system: boolean;
  /** All signer certificate digests (lower hex). */
  signers: string[];
  userId: number;
  /** ms since epoch. */
  firstInstallTime: number;
  lastUpdateTime: number;
  /** Directory holding base.apk (`codePath` in dumpsys). */
  codePath: string;
  /** `<service>`s the APK declares: class name and the permission a binder must hold. */
  services: Array<{ name: string; permission: string | null }>;
  /** `<activity>`s the APK declares: class name and whether `am start -n` from the shell may start it. */
  activities: Array<{ name: string; exported: boolean }>;
}

export interface InstallOptions {
  /** `-t`: allow test-only APKs. */
  allowTest?: boolean;
  /** `-d`: allow a lower versionCode. */
  allowDowngrade?: boolean;
  /** `-r`: replace (the default since Android 7; required below SDK 24). */
  replace?: boolean;
  /** `-R`: refuse to replace an installed package. */
  noReplace?: boolean;
  /** `-g`: grant runtime permissions. */
  grantPermissions?: boolean;
}

export type InstallResult = { ok: true; pkg: PackageRecord } | { ok: false; code: string; message?: string };

/** `Success` or `Failure [CODE: message]` as pm prints it. */
export function formatInstallResult(result: InstallResult): string {
  if (result.ok) return 'Success';
  return `Failure [${result.code}${result.message === undefined ? '' : `: ${result.message}`}]`;
}

interface SystemPackageSpec {
  packageName: string;
  apkPath: string;
  versionCode: number;
  versionName: string;
  userId: number;
}

const PLATFORM_CERT = 'c8a2e9bccf597c2fb6dc66bee293fc13f2fc47ec77bc6b2b0d52c11f51192ab8';

const SYSTEM_PACKAGES: SystemPackageSpec[] = [
  {
    packageName: 'android',
    apkPath: '/system/framework/framework-res.apk',
    versionCode: 34,
    versionName: '14',
    userId: 1000,
  },
  {
    packageName: 'com.android.settings',
    apkPath: '/system/priv-app/Settings/Settings.apk',
    versionCode: 34,
    versionName: '14',
    userId: 1000,
  },
  {
    packageName: 'com.android.systemui',
    apkPath: '/system/priv-app/SystemUI/SystemUI.apk',
    versionCode: 34,
    versionName: '14',
    userId: 10120,
  },
  {
    packageName: 'com.android.shell',
    apkPath: '/system/priv-app/Shell/Shell.apk',
    versionCode: 34,
    versionName: '14',
    userId: 2000,
  },
  {
    packageName: 'com.android.providers.settings',
    apkPath: '/system/priv-app/SettingsProvider/SettingsProvider.apk',
    versionCode: 34,
    versionName: '14',
    userId: 1000,
  },
  {
    packageName: 'com.android.packageinstaller',
    apkPath: '/system/priv-app/PackageInstaller/PackageInstaller.apk',
    versionCode: 34,
    versionName: '14',
    userId: 10060,
  },
  {
    packageName: 'com.android.phone',
    apkPath: '/system/priv-app/TeleService/TeleService.apk',
    versionCode: 34,
    versionName: '14',
    userId: 1001,
  },
  {
    packageName: 'com.android.launcher3',
    apkPath: '/system/priv-app/Launcher3QuickStep/Launcher3QuickStep.apk',
    versionCode: 34,
    versionName: '14',
    userId: 10110,
  },
  {
    packageName: 'com.android.documentsui',
    apkPath: '/system/priv-app/DocumentsUI/DocumentsUI.apk',
    versionCode: 34,
    versionName: '14',
    userId: 10070,
  },
  {
    packageName: 'com.android.contacts',
    apkPath: '/system/priv-app/Contacts/Contacts.apk',
    versionCode: 10744,
    versionName: '1.7.44',
    userId: 10090,
  },
  {
    packageName: 'com.android.camera2',
    apkPath: '/system/app/Camera2/Camera2.apk',
    versionCode: 34,
    versionName: '14',
    userId: 10095,
  },
  {
    packageName: 'com.android.chrome',
    apkPath: '/product/app/Chrome/Chrome.apk',
    versionCode: 612309233,
    versionName: '121.0.6167.178',
    userId: 10140,
  },
  {
    packageName: 'com.google.android.gms',
    apkPath: '/product/priv-app/GmsCore/GmsCore.apk',
    versionCode: 240504022,
    versionName: '24.05.04 (190400-603201457)',
    userId: 10150,
  },
  {
    packageName: 'com.google.android.inputmethod.latin',
    apkPath: '/product/app/LatinIMEGooglePrebuilt/LatinIMEGooglePrebuilt.apk',
    versionCode: 130720190,
    versionName: '13.7.20.590069137-release-x86_64',
    userId: 10160,
  },
];

/** Stand-in bytes of a preinstalled system APK (its content is never parsed). */
function systemApkBytes(spec: SystemPackageSpec): Uint8Array {
  return new TextEncoder().encode(
    `PK\u0003\u0004 devicebridge simulator system package ${spec.packageName} ${spec.versionCode}\n`,
  );
}

/** The files of the preinstalled packages, for the system image. */
export function systemPackageFiles(): Record<string, Uint8Array> {
  return Object.fromEntries(SYSTEM_PACKAGES.map((spec) => [spec.apkPath, systemApkBytes(spec)]));
}

const SYSTEM_INSTALL_TIME = 1230768000_000;

export class PackageManager {
  readonly #fs: MemoryFileSystem;
  readonly #sdk: () => number;
  readonly #random: () => number;
  readonly #faults: Faults;
  readonly #packages = new Map<string, PackageRecord>();
  #queue: Promise<unknown> = Promise.resolve();
  #nextUserId = 10200;

  /** Called after every install and uninstall that changed something (the a11y manager rebinds). */
  onChange: () => void = () => undefined;

  constructor(options: { fs: MemoryFileSystem; sdk: () => number; random: () => number; faults: Faults }) {
    this.#fs = options.fs;
    this.#sdk = options.sdk;
    this.#random = options.random;
    this.#faults = options.faults;
    for (const spec of SYSTEM_PACKAGES) {
      const bytes = systemApkBytes(spec);
      this.#packages.set(spec.packageName, {
        packageName: spec.packageName,
        versionCode: spec.versionCode,
        versionName: spec.versionName,
        apkPath: spec.apkPath,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        testOnly: false,
        signerSha256: PLATFORM_CERT,
        signers: [PLATFORM_CERT],
        instrumentations: [],
        services: [],
        activities: [],
        minSdk: 34,
        targetSdk: 34,
        debuggable: false,
        system: true,
        userId: spec.userId,
        firstInstallTime: SYSTEM_INSTALL_TIME,
        lastUpdateTime: SYSTEM_INSTALL_TIME,
        codePath: normalizePath(`${spec.apkPath}/..`),
      });
    }
  }

  /**
   * Put a third-party app on the device as if installed before boot (stand-in APK bytes, unsigned),
   * under a fresh `/data/app/~~X==/pkg-Y==` directory like any install.
   */
  preinstall(spec: PreinstalledPackage): PackageRecord {
    const bytes = new TextEncoder().encode(
      `PK\u0003\u0004 devicebridge simulator preinstalled package ${spec.packageName} ${spec.versionCode}\n`,
    );
    const codePath = this.#newCodePath(spec.packageName);
    const apkPath = `${codePath}/base.apk`;
    this.#fs.write(apkPath, bytes, { actor: 'system', mode: 0o100644 });
    const record: PackageRecord = {
      packageName: spec.packageName,
      versionCode: spec.versionCode,
      versionName: spec.versionName ?? '',
      apkPath,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      testOnly: false,
      signerSha256: null,
      signers: [],
      instrumentations: [],
      services: [],
      activities: [],
      minSdk: null,
      targetSdk: null,
      debuggable: false,
      system: false,
      userId: this.#nextUserId++,
      firstInstallTime: SYSTEM_INSTALL_TIME,
      lastUpdateTime: SYSTEM_INSTALL_TIME,
      codePath,
    };
    this.#packages.set(spec.packageName, record);
    return record;
  }

  get(packageName: string): PackageRecord | undefined {
    return this.#packages.get(packageName);
  }

  /** Installed packages sorted by name. */
  list(): PackageRecord[] {
    return [...this.#packages.values()].sort((a, b) => (a.packageName < b.packageName ? -1 : 1));
  }

  /** Install APK bytes; never throws for bad input (the result carries the failure code). */
  install(bytes: Uint8Array, options: InstallOptions = {}): Promise<InstallResult> {
    return this.#serialise(async () => {
      const result = await this.#install(bytes, options);
      if (result.ok) this.onChange();
      return result;
    });
  }

  /** Uninstall; false when the package is unknown or a system package (`DELETE_FAILED_INTERNAL_ERROR`). */
  uninstall(packageName: string): Promise<boolean> {
    return this.#serialise(async () => {
      const pkg = this.#packages.get(packageName);
      if (pkg === undefined || pkg.system) return false;
      this.#packages.delete(packageName);
      this.#removeCodePath(pkg.codePath);
      this.onChange();
      return true;
    });
  }

  #serialise<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #install(bytes: Uint8Array, options: InstallOptions): Promise<InstallResult> {
    const session = 100000000 + Math.floor(this.#random() * 899999999);
    const stagedApk = `/data/app/vmdl${session}.tmp/base.apk`;
    const forced = this.#faults.installFailure;
    if (forced !== undefined && forced !== '') return { ok: false, code: forced };

    let info: ReturnType<typeof parseApkInfo>;
    try {
      info = parseApkInfo(bytes);
    } catch {
      return {
        ok: false,
        code: 'INSTALL_PARSE_FAILED_NOT_APK',
        message: `Failed to parse ${stagedApk}: Failed to load asset path ${stagedApk}`,
      };
    }
    const sdk = this.#sdk();
    if (info.signerCertSha256.length === 0) {
      return {
        ok: false,
        code: 'INSTALL_PARSE_FAILED_NO_CERTIFICATES',
        message: `Scanning Failed.: No signature found in package of version 2 or newer for package ${info.packageName}`,
      };
    }
    if (info.minSdk !== null && info.minSdk > sdk) {
      return {
        ok: false,
        code: 'INSTALL_FAILED_OLDER_SDK',
        message: `Failed parse during installPackageLI: ${stagedApk} (at Binary XML file line #7): Requires newer sdk version #${info.minSdk} (current version is #${sdk})`,
      };
    }
    if (info.testOnly && options.allowTest !== true) {
      return { ok: false, code: 'INSTALL_FAILED_TEST_ONLY', message: 'installPackageLI' };
    }
    const existing = this.#packages.get(info.packageName);
    if (existing !== undefined) {
      const replaceAllowed = options.noReplace !== true && (sdk >= 24 || options.replace === true);
      if (!replaceAllowed) {
        return {
          ok: false,
          code: 'INSTALL_FAILED_ALREADY_EXISTS',
          message: `Attempt to re-install ${info.packageName} without first uninstalling.`,
        };
      }
      if (info.versionCode < existing.versionCode && options.allowDowngrade !== true) {
        return {
          ok: false,
          code: 'INSTALL_FAILED_VERSION_DOWNGRADE',
          message: `Downgrade detected: Update version code ${info.versionCode} is older than current ${existing.versionCode}`,
        };
      }
      const oldSigners = new Set(existing.signers);
      const sameSigners =
        oldSigners.size === new Set(info.signerCertSha256).size &&
        info.signerCertSha256.every((s) => oldSigners.has(s));
      if (!sameSigners) {
        return {
          ok: false,
          code: 'INSTALL_FAILED_UPDATE_INCOMPATIBLE',
          message: `Existing package ${info.packageName} signatures do not match newer version; ignoring!`,
        };
      }
    }

    const codePath = this.#newCodePath(info.packageName);
    const apkPath = `${codePath}/base.apk`;
    this.#fs.write(apkPath, bytes, { actor: 'system', mode: 0o100644 });
    if (existing !== undefined && !existing.system) this.#removeCodePath(existing.codePath);
    const now = Date.now();
    const signers = info.signerCertSha256.map((s) => s.toLowerCase());
    const record: PackageRecord = {
      packageName: info.packageName,
      versionCode: info.versionCode,
      versionName: info.versionName ?? '',
      apkPath,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      testOnly: info.testOnly,
      signerSha256: signers[0] ?? null,
      signers,
      instrumentations: info.instrumentations.map((i) => ({ name: i.name, targetPackage: i.targetPackage })),
      services: info.services.map((sv) => ({ ...sv })),
      activities: info.activities.map((a) => ({ ...a })),
      minSdk: info.minSdk,
      targetSdk: info.targetSdk,
      debuggable: info.debuggable,
      system: false,
      userId: existing?.userId ?? this.#nextUserId++,
      firstInstallTime: existing?.firstInstallTime ?? now,
      lastUpdateTime: now,
      codePath,
    };
    this.#packages.set(info.packageName, record);
    return { ok: true, pkg: record };
  }

  /** Create a fresh `/data/app/~~X==/pkg-Y==` (every install gets a new one, as on Android 11+). */
  #newCodePath(packageName: string): string {
    const codePath = `/data/app/~~${this.#randomToken()}==/${packageName}-${this.#randomToken()}==`;
    this.#fs.mkdir(codePath, {
      parents: true,
      actor: 'system',
      mode: 0o40771,
      access: { writable: false, listable: false },
    });
    return codePath;
  }

  /** Remove `/data/app/~~X==/pkg-Y==` and its now empty `~~X==` parent. */
  #removeCodePath(codePath: string): void {
    if (!codePath.startsWith('/data/app/')) return;
    const parent = normalizePath(`${codePath}/..`);
    try {
      this.#fs.rm(parent === '/data/app' ? codePath : parent, { recursive: true, actor: 'system' });
    } catch {
      // already gone
    }
  }

  /** 16 random bytes as unpadded base64url (22 characters), like PackageManagerService's dirs. */
  #randomToken(): string {
    const bytes = new Uint8Array(16);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(this.#random() * 256);
    return Buffer.from(bytes).toString('base64url');
  }
}
