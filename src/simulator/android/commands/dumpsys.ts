/** `dumpsys SERVICE ...`: `package PKG` in the real layout, `window`, `display`, `battery`. */
import type { CommandFn } from '../context.ts';
import type { PackageRecord } from '../package-manager.ts';

function hex(value: string): string {
  let h = 0x9e3779b9;
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x85ebca6b) >>> 0;
  return h.toString(16).padStart(8, '0').slice(0, 7);
}

function timestamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** The `Packages:` section of `dumpsys package PKG` for one package. */
export function dumpPackage(pkg: PackageRecord): string {
  const flags = ['HAS_CODE', 'ALLOW_CLEAR_USER_DATA', 'ALLOW_BACKUP'];
  if (pkg.system) flags.unshift('SYSTEM');
  if (pkg.debuggable) flags.splice(pkg.system ? 1 : 0, 0, 'DEBUGGABLE');
  if (pkg.testOnly) flags.push('TEST_ONLY');
  const privateFlags = [
    'PRIVATE_FLAG_ACTIVITIES_RESIZE_MODE_RESIZEABLE_VIA_SDK_VERSION',
    'ALLOW_AUDIO_PLAYBACK_CAPTURE',
  ];
  if (pkg.system) privateFlags.push('PRIVILEGED');
  const id = hex(pkg.packageName);
  const lines = [
    'Activity Resolver Table:',
    '  Non-Data Actions:',
    '      android.intent.action.MAIN:',
    `        ${hex(`${pkg.packageName}#main`)} ${pkg.packageName}/.MainActivity filter ${hex(`${pkg.packageName}#filter`)}`,
    '',
    'Key Set Manager:',
    `  [${pkg.packageName}]`,
    `      Signing KeySets: ${(pkg.userId % 97) + 1}`,
    '',
    'Packages:',
    `  Package [${pkg.packageName}] (${id}):`,
    `    appId=${pkg.userId}`,
    `    pkg=Package{${hex(`${pkg.packageName}#pkg`)} ${pkg.packageName}}`,
    `    codePath=${pkg.codePath}`,
    `    resourcePath=${pkg.codePath}`,
    `    legacyNativeLibraryDir=${pkg.codePath}/lib`,
    '    extractNativeLibs=false',
    '    primaryCpuAbi=null',
    '    secondaryCpuAbi=null',
    '    cpuAbiOverride=null',
    `    versionCode=${pkg.versionCode} minSdk=${pkg.minSdk ?? 1} targetSdk=${pkg.targetSdk ?? pkg.minSdk ?? 1}`,
    '    minExtensionVersions=[]',
    `    versionName=${pkg.versionName}`,
    '    hiddenApiEnforcementPolicy=2',
    '    usesNonSdkApi=false',
    '    splits=[base]',
    `    apkSigningVersion=${pkg.signers.length > 0 ? 2 : 0}`,
    `    flags=[ ${flags.join(' ')} ]`,
    `    privateFlags=[ ${privateFlags.join(' ')} ]`,
    '    forceQueryable=false',
    `    dataDir=/data/user/0/${pkg.packageName}`,
    '    supportsScreens=[small, medium, large, xlarge, resizeable, anyDensity]',
    `    timeStamp=${timestamp(pkg.lastUpdateTime)}`,
    `    lastUpdateTime=${timestamp(pkg.lastUpdateTime)}`,
    `    installerPackageName=${pkg.system ? 'null' : 'com.android.shell'}`,
    `    packageSource=${pkg.system ? 0 : 4}`,
    `    signatures=PackageSignatures{${hex(`${pkg.packageName}#sig`)} version:2, signatures:[${pkg.signers.map((s) => s.slice(0, 8)).join(', ')}], past signatures:[]}`,
    '    installPermissionsFixed=true',
    `    pkgFlags=[ ${flags.join(' ')} ]`,
    `    privatePkgFlags=[ ${privateFlags.join(' ')} ]`,
    '    apexModuleName=null',
    `    User 0: ceDataInode=${(pkg.userId * 7919) % 1000003} installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false quarantined=false`,
    `      firstInstallTime=${timestamp(pkg.firstInstallTime)}`,
    '      uninstallReason=0',
    '      gids=[3003]',
    '      runtime permissions:',
  ];
  if (pkg.instrumentations.length > 0) {
    lines.push('', 'Instrumentation:');
    for (const inst of pkg.instrumentations) {
      lines.push(`  ${hex(inst.name)} ${pkg.packageName}/${inst.name} (target=${inst.targetPackage})`);
    }
  }
  lines.push(
    '',
    'Dexopt state:',
    `  [${pkg.packageName}]`,
    `    path: ${pkg.apkPath}`,
    '      x86_64: [status=verify] [reason=install]',
  );
  return `${lines.join('\n')}\n`;
}

export const dumpsys: CommandFn = async (argv, ctx) => {
  const [service, ...rest] = argv;
  switch (service) {
    case 'package': {
      const name = rest.find((a) => !a.startsWith('-'));
      if (name === undefined) {
        ctx.io.stdout(
          ctx.android.packages
            .list()
            .map(
              (p) =>
                `  Package [${p.packageName}] (${hex(p.packageName)}):\n    versionCode=${p.versionCode}\n`,
            )
            .join(''),
        );
        return 0;
      }
      const pkg = ctx.android.packages.get(name);
      ctx.io.stdout(pkg === undefined ? `Unable to find package: ${name}\n` : dumpPackage(pkg));
      return 0;
    }
    case 'window':
    case 'display': {
      const { width, height } = ctx.android.device.displaySize();
      ctx.io.stdout(
        [
          'WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)',
          '  Display: mDisplayId=0 rootTasks=2',
          `    init=${width}x${height} 420dpi cur=${width}x${height} app=${width}x${height - 192} rng=${width}x${width}-${height}x${height}`,
          '    deferred=false mLayoutNeeded=false mTouchExcludeRegion=SkRegion()',
          '  mCurrentFocus=Window{a1b2c3d u0 com.android.launcher3/com.android.launcher3.uioverride.QuickstepLauncher}',
          '  mFocusedApp=ActivityRecord{e4f5a6b u0 com.android.launcher3/.uioverride.QuickstepLauncher t8}',
          '',
        ].join('\n'),
      );
      return 0;
    }
    case 'battery':
      ctx.io.stdout(
        'Current Battery Service state:\n  AC powered: true\n  USB powered: false\n  Wireless powered: false\n  status: 2\n  health: 2\n  present: true\n  level: 100\n  scale: 100\n  voltage: 5000\n  temperature: 250\n  technology: Li-ion\n',
      );
      return 0;
    case undefined:
      ctx.io.stdout(
        'Currently running services:\n  activity\n  battery\n  display\n  input\n  package\n  settings\n  window\n',
      );
      return 0;
    default:
      ctx.io.stderr(`Can't find service: ${service}\n`);
      return 0;
  }
};
