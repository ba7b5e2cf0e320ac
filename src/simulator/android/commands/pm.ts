/** `pm` / `cmd package`: install, uninstall, path, list packages|instrumentation, dump, clear. */
import type { CommandContext, CommandFn } from '../context.ts';
import { resolvePath } from '../context.ts';
import { FsError } from '../fs.ts';
import { formatInstallResult, type InstallOptions, type PackageRecord } from '../package-manager.ts';
import { dumpPackage } from './dumpsys.ts';

/** What `ShellCommand` prints when a command throws (exit status 255). */
function exception(ctx: CommandContext, verb: string, type: string, message: string): number {
  ctx.io.stderr(
    `Exception occurred while executing '${verb}':\n${type}: ${message}\n\tat com.android.server.pm.PackageManagerShellCommand.onCommand(PackageManagerShellCommand.java:226)\n`,
  );
  return 255;
}

/** Install options that take a value (consumed and ignored unless noted). */
const VALUED_INSTALL_OPTIONS = new Set([
  '-i',
  '-p',
  '--user',
  '--abi',
  '--install-location',
  '--install-reason',
  '--originating-uri',
  '--referrer',
  '--pkg',
  '--force-uuid',
  '--dexopt-compiler-filter',
  '--update-ownership',
]);
const FLAG_INSTALL_OPTIONS = new Set([
  '-l',
  '-s',
  '-f',
  '-x',
  '--instant',
  '--full',
  '--dont-kill',
  '--restrict-permissions',
  '--force-queryable',
  '--apex',
  '--staged',
  '--bypass-low-target-sdk-block',
  '--skip-verification',
  '--no-streaming',
  '--streaming',
  '--wait',
  '--enable-rollback',
]);

async function install(argv: string[], ctx: CommandContext, verb: string): Promise<number> {
  const options: InstallOptions = {};
  let size: number | undefined;
  const paths: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-r') options.replace = true;
    else if (arg === '-R') options.noReplace = true;
    else if (arg === '-t') options.allowTest = true;
    else if (arg === '-d') options.allowDowngrade = true;
    else if (arg === '-g') options.grantPermissions = true;
    else if (arg === '-S') {
      const value = argv[++i];
      size = value === undefined ? Number.NaN : Number(value);
      if (!Number.isSafeInteger(size) || size < 0) {
        return exception(ctx, verb, 'java.lang.NumberFormatException', `For input string: "${value ?? ''}"`);
      }
    } else if (VALUED_INSTALL_OPTIONS.has(arg)) {
      if (argv[++i] === undefined) {
        return exception(ctx, verb, 'java.lang.IllegalArgumentException', `Argument expected after "${arg}"`);
      }
    } else if (FLAG_INSTALL_OPTIONS.has(arg)) {
      // accepted, no effect in the simulator
    } else if (arg.startsWith('-') && arg !== '-') {
      return exception(ctx, verb, 'java.lang.IllegalArgumentException', `Unknown option ${arg}`);
    } else paths.push(arg);
  }

  let bytes: Uint8Array;
  const path = paths[0];
  if (path === undefined || path === '-') {
    if (size === undefined) {
      ctx.io.stderr('Error: must either specify a package size or an APK file\n');
      return 1;
    }
    bytes = await ctx.stdin.readExactly(size);
    if (bytes.byteLength < size) {
      ctx.io.stdout(
        `Failure [INSTALL_FAILED_INVALID_APK: Failed to write base.apk: short read (${bytes.byteLength} of ${size} bytes)]\n`,
      );
      return 1;
    }
  } else {
    try {
      bytes = ctx.android.fs.read(resolvePath(ctx, path));
    } catch (error) {
      if (!(error instanceof FsError)) throw error;
      ctx.io.stderr(`Error: Can't open file: ${path}\n`);
      return exception(ctx, verb, 'java.lang.IllegalArgumentException', `Error: Can't open file: ${path}`);
    }
  }
  const result = await ctx.android.packages.install(bytes, options);
  ctx.io.stdout(`${formatInstallResult(result)}\n`);
  if (result.ok)
    ctx.android.device.log.write(
      'I',
      'PackageManager',
      `Installed ${result.pkg.packageName} versionCode ${result.pkg.versionCode}`,
    );
  else ctx.android.device.log.write('W', 'PackageManager', `Install failed: ${result.code}`);
  return result.ok ? 0 : 1;
}

async function uninstall(argv: string[], ctx: CommandContext): Promise<number> {
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--user' || arg === '--versionCode') i++;
    else if (arg.startsWith('-')) continue;
    else names.push(arg);
  }
  const name = names[0];
  if (name === undefined) {
    ctx.io.stderr('Error: package name not specified\n');
    return 1;
  }
  const removed = await ctx.android.packages.uninstall(name);
  if (removed) ctx.android.device.log.write('I', 'PackageManager', `Uninstalled ${name}`);
  ctx.io.stdout(removed ? 'Success\n' : 'Failure [DELETE_FAILED_INTERNAL_ERROR]\n');
  return removed ? 0 : 1;
}

function listPackages(argv: string[], ctx: CommandContext): number {
  const flags = new Set<string>();
  let filter: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--user' || arg === '--uid') i++;
    else if (arg.startsWith('--')) flags.add(arg);
    else if (arg.startsWith('-')) for (const f of arg.slice(1)) flags.add(f);
    else filter = arg;
  }
  let packages = ctx.android.packages.list();
  if (flags.has('s')) packages = packages.filter((p) => p.system);
  if (flags.has('3')) packages = packages.filter((p) => !p.system);
  if (flags.has('d')) packages = [];
  if (filter !== undefined) packages = packages.filter((p) => p.packageName.includes(filter as string));
  const lines = packages.map((p) => {
    let line = flags.has('f') ? `package:${p.apkPath}=${p.packageName}` : `package:${p.packageName}`;
    if (flags.has('--show-versioncode')) line += ` versionCode:${p.versionCode}`;
    if (flags.has('i')) line += `  installer=${p.system ? 'null' : 'com.android.shell'}`;
    if (flags.has('U')) line += ` uid:${p.userId}`;
    return `${line}\n`;
  });
  ctx.io.stdout(lines.join(''));
  return 0;
}

/** `pkg/.Class` when the class is inside the package, else `pkg/full.Class` (flattenToShortString). */
export function shortComponent(packageName: string, className: string): string {
  return className.startsWith(`${packageName}.`)
    ? `${packageName}/${className.slice(packageName.length)}`
    : `${packageName}/${className}`;
}

function listInstrumentation(argv: string[], ctx: CommandContext): number {
  const showFiles = argv.includes('-f');
  const target = argv.find((a) => !a.startsWith('-'));
  const lines: string[] = [];
  for (const pkg of ctx.android.packages.list()) {
    for (const inst of pkg.instrumentations) {
      if (target !== undefined && inst.targetPackage !== target) continue;
      const file = showFiles ? `${pkg.apkPath}=` : '';
      lines.push(
        `instrumentation:${file}${shortComponent(pkg.packageName, inst.name)} (target=${inst.targetPackage})\n`,
      );
    }
  }
  ctx.io.stdout(lines.sort().join(''));
  return 0;
}

function findPackage(ctx: CommandContext, name: string | undefined): PackageRecord | undefined {
  return name === undefined ? undefined : ctx.android.packages.get(name);
}

export const PM_USAGE = `Package manager (package) commands:
  help
    Print this help text.

  path [--user USER_ID] PACKAGE
    Print the path to the .apk of the given PACKAGE.

  list packages [-f] [-d] [-e] [-s] [-3] [-i] [-l] [-u] [-U] [--show-versioncode] [--user USER_ID] [FILTER]
    Prints all packages; optionally only those whose name contains
    the text in FILTER.

  list instrumentation [-f] [TARGET-PACKAGE]
    Prints all test packages; optionally only those targeting TARGET-PACKAGE.

  install [-rtfdgw] [-i PACKAGE] [--user USER_ID|all|current] [-S BYTES] [PATH|-]
    Install an application.  Must provide the apk data to install, either as
    file path(s) or '-' to read from stdin.  Options are:
      -R: disallow replacement of existing application
      -t: allow test packages
      -d: allow version code downgrade (debuggable packages only)
      -g: grant all runtime permissions
      -S: size in bytes of package, required for stdin

  uninstall [-k] [--user USER_ID] [--versionCode VERSION] PACKAGE
    Remove the given package name from the system.

  clear [--user USER_ID] PACKAGE
    Deletes all data associated with a package.
`;

/** `pm ARGS` (also `cmd package ARGS` and `abb_exec:package`). */
export const pm: CommandFn = async (argv, ctx) => {
  const [verb, ...rest] = argv;
  switch (verb) {
    case undefined:
    case 'help':
    case '-h':
      ctx.io.stdout(PM_USAGE);
      return 0;
    case 'install':
      return install(rest, ctx, verb);
    case 'uninstall':
      return uninstall(rest, ctx);
    case 'path': {
      const name = rest.filter((a, i) => !a.startsWith('-') && rest[i - 1] !== '--user')[0];
      const pkg = findPackage(ctx, name);
      if (pkg === undefined) return 1;
      ctx.io.stdout(`package:${pkg.apkPath}\n`);
      return 0;
    }
    case 'list': {
      const [what, ...args] = rest;
      if (what === 'packages') return listPackages(args, ctx);
      if (what === 'instrumentation') return listInstrumentation(args, ctx);
      if (what === 'features') {
        ctx.io.stdout(
          'feature:android.hardware.touchscreen\nfeature:android.software.app_widgets\nfeature:reqGlEsVersion=0x30002\n',
        );
        return 0;
      }
      if (what === 'users') {
        ctx.io.stdout('Users:\n\tUserInfo{0:Owner:c13} running\n');
        return 0;
      }
      ctx.io.stderr(`Error: unknown list type '${what ?? ''}'\n`);
      return 255;
    }
    case 'dump': {
      const pkg = findPackage(ctx, rest[0]);
      ctx.io.stdout(pkg === undefined ? `Unable to find package: ${rest[0] ?? ''}\n` : dumpPackage(pkg));
      return 0;
    }
    case 'clear': {
      const pkg = findPackage(ctx, rest.filter((a) => !a.startsWith('-'))[0]);
      ctx.io.stdout(pkg === undefined ? 'Failed\n' : 'Success\n');
      return pkg === undefined ? 1 : 0;
    }
    case 'grant':
    case 'revoke':
    case 'enable':
    case 'disable-user':
    case 'reset-permissions':
      return 0;
    default:
      ctx.io.stderr(`Unknown command: ${verb}\n`);
      return 255;
  }
};
