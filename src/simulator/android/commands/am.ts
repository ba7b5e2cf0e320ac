/** `am instrument` (the helper emulation), `am force-stop`, `am start`, `am broadcast`. */
import { amInstrument, forceStop } from '../../helper/index.ts';
import { SELF_TEST_ACTIVITY_CLASSES, selfTestScreenXml } from '../../helper/self-test-screen.ts';
import type { CommandFn } from '../context.ts';

function intentDescription(argv: string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = argv[i + 1];
    if (arg === '-a' && value !== undefined) parts.push(`act=${value}`);
    else if (arg === '-d' && value !== undefined) parts.push(`dat=${value}`);
    else if (arg === '-c' && value !== undefined) parts.push(`cat=[${value}]`);
    else if (arg === '-n' && value !== undefined) parts.push(`cmp=${value}`);
    else if (arg === '-p' && value !== undefined) parts.push(`pkg=${value}`);
    else continue;
    i++;
  }
  return `Intent { ${parts.join(' ')} }`;
}

export const am: CommandFn = async (argv, ctx) => {
  const [verb, ...rest] = argv;
  const device = ctx.android.device;
  switch (verb) {
    case 'instrument':
      device.log.write('I', 'ActivityManager', `Start instrumentation ${rest.at(-1) ?? ''}`);
      return amInstrument(rest, ctx.io, device);
    case 'force-stop':
    case 'kill': {
      const args = rest.filter((a, i) => !a.startsWith('--') && rest[i - 1] !== '--user');
      const pkg = args[0];
      if (pkg === undefined) {
        ctx.io.stderr(
          `Exception occurred while executing '${verb}':\njava.lang.IllegalArgumentException: Argument expected after "${verb}"\n`,
        );
        return 255;
      }
      forceStop(device, pkg);
      device.stopActivities(pkg);
      return 0;
    }
    case 'start':
    case 'start-activity': {
      ctx.io.stdout(`Starting: ${intentDescription(rest)}\n`);
      // An intent aimed at a package (-p PKG, -n PKG/CLS) that is not installed does not resolve.
      const flag = rest.findIndex((a) => a === '-p' || a === '-n');
      const target = flag < 0 ? undefined : rest[flag + 1]?.split('/')[0];
      if (target !== undefined && !ctx.android.packages.list().some((p) => p.packageName === target)) {
        ctx.io.stderr(`Error: Activity not started, unable to resolve ${intentDescription(rest)}\n`);
        return 0;
      }
      // `-n PKG/CLS`: the shell uid may start only an exported activity of the package.
      const component = flag >= 0 && rest[flag] === '-n' ? rest[flag + 1] : undefined;
      const slash = component?.indexOf('/') ?? -1;
      if (component !== undefined && target !== undefined && slash > 0) {
        const cls = component.slice(slash + 1);
        const className = cls.startsWith('.') ? `${target}${cls}` : cls;
        const pkg = ctx.android.packages.get(target);
        const activity = pkg?.activities.find((a) => a.name === className);
        if (pkg !== undefined && activity === undefined) {
          ctx.io.stderr(`Error type 3\nError: Activity class {${target}/${className}} does not exist.\n`);
          return 0;
        }
        if (activity !== undefined && !activity.exported) {
          ctx.io.stderr(
            `Exception occurred while executing 'start':\njava.lang.SecurityException: Permission Denial: starting Intent { flg=0x10000000 cmp=${target}/${cls} } from null (pid=${device.allocatePid()}, uid=2000) not exported from uid ${pkg?.userId ?? 10000}\n`,
          );
          return 255;
        }
        if (activity !== undefined && SELF_TEST_ACTIVITY_CLASSES.has(className))
          device.startActivity(target, selfTestScreenXml(target));
      }
      device.log.write('I', 'ActivityTaskManager', `START u0 ${intentDescription(rest)} from uid 2000`);
      if (rest.includes('-W'))
        ctx.io.stdout('Status: ok\nLaunchState: COLD\nTotalTime: 412\nWaitTime: 415\nComplete\n');
      return 0;
    }
    case 'broadcast':
      ctx.io.stdout(`Broadcasting: ${intentDescription(rest)}\nBroadcast completed: result=0\n`);
      return 0;
    case 'get-current-user':
      ctx.io.stdout('0\n');
      return 0;
    case undefined:
    case 'help':
      ctx.io.stdout(
        'Activity manager (activity) commands:\n  help\n  start [-W] [-n COMPONENT] ...\n  force-stop [--user <USER_ID>] <PACKAGE>\n  instrument [-r] [-e <NAME> <VALUE>] [-w] <COMPONENT>\n  broadcast [--user <USER_ID>] <INTENT>\n',
      );
      return 0;
    default:
      ctx.io.stderr(`Unknown command: ${verb}\n`);
      return 255;
  }
};
