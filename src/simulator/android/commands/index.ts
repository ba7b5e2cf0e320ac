/** The command table of the emulated `/system/bin`. */
import { type CommandFn, simulatedFailure } from '../context.ts';
import { am } from './am.ts';
import { appProcess } from './app-process.ts';
import { echo, falseCommand, id, nohup, pkill, sh, sleep, trueCommand, uname, whoami, yes } from './basic.ts';
import { dumpsys } from './dumpsys.ts';
import { cat, ls, md5sum, mkdir, rm, rmdir, sha1sum, sha256sum, touch } from './files.ts';
import { find } from './find.ts';
import { getprop } from './getprop.ts';
import { input } from './input.ts';
import { logcat } from './logcat.ts';
import { pm } from './pm.ts';
import { ps, shellKill, toyboxKill } from './processes.ts';
import { screencap } from './screencap.ts';
import { screenrecord } from './screenrecord.ts';
import { settings } from './settings.ts';
import { cut, grep, head, tail, wc } from './text.ts';
import { wm } from './wm.ts';

/** Services reachable through `cmd SERVICE ...` (and `abb_exec:SERVICE`), with their command's name. */
const SERVICES = new Map<string, [string, CommandFn]>([
  ['package', ['pm', pm]],
  ['settings', ['settings', settings]],
  ['activity', ['am', am]],
  ['input', ['input', input]],
  ['window', ['wm', wm]],
]);

const cmd: CommandFn = async (argv, ctx) => {
  const [service, ...rest] = argv;
  if (service === undefined) {
    ctx.io.stderr(
      'cmd: No service specified; use -l to list all running services. Use -w to start and wait for a service.\n',
    );
    return 20;
  }
  if (service === '-l') {
    ctx.io.stdout(`Currently running services:\n${[...SERVICES.keys()].map((s) => `  ${s}\n`).join('')}`);
    return 0;
  }
  const entry = SERVICES.get(service);
  if (entry === undefined) {
    ctx.io.stderr(`cmd: Can't find service: ${service}\n`);
    return 20;
  }
  const [name, command] = entry;
  return simulatedFailure(name, ctx.io, ctx.android.device.faults) ?? command(rest, ctx);
};

/** Commands toybox provides (reachable as `toybox NAME ...`). */
const TOYBOX = new Map<string, CommandFn>([
  ['cat', cat],
  ['cut', cut],
  ['grep', grep],
  ['head', head],
  ['tail', tail],
  ['wc', wc],
  ['echo', echo],
  ['false', falseCommand],
  ['find', find],
  ['id', id],
  ['kill', toyboxKill],
  ['ls', ls],
  ['md5sum', md5sum],
  ['mkdir', mkdir],
  ['nohup', nohup],
  ['pkill', pkill],
  ['ps', ps],
  ['rm', rm],
  ['rmdir', rmdir],
  ['sha1sum', sha1sum],
  ['sha256sum', sha256sum],
  ['sleep', sleep],
  ['touch', touch],
  ['true', trueCommand],
  ['uname', uname],
  ['whoami', whoami],
  ['yes', yes],
]);

const toybox: CommandFn = async (argv, ctx) => {
  const [name, ...rest] = argv;
  if (name === undefined) {
    ctx.io.stdout(`${[...TOYBOX.keys()].sort().join(' ')}\n`);
    return 0;
  }
  const command = TOYBOX.get(name);
  if (command === undefined) {
    ctx.io.stderr(`toybox: Unknown command ${name}\n`);
    return 1;
  }
  return simulatedFailure(name, ctx.io, ctx.android.device.faults) ?? command(rest, ctx);
};

export function createCommandTable(extra: Iterable<[string, CommandFn]> = []): Map<string, CommandFn> {
  return new Map<string, CommandFn>([
    ...TOYBOX,
    ['am', am],
    ['app_process', appProcess],
    ['cmd', cmd],
    ['dumpsys', dumpsys],
    ['getprop', getprop],
    ['input', input],
    ['kill', shellKill],
    ['logcat', logcat],
    ['pm', pm],
    ['screencap', screencap],
    ['screenrecord', screenrecord],
    ['settings', settings],
    ['sh', sh],
    ['toybox', toybox],
    ['wm', wm],
    ...extra,
  ]);
}
