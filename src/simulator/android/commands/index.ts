/** The command table of the emulated `/system/bin`. */
import type { CommandFn } from '../context.ts';
import { echo, falseCommand, id, sh, sleep, trueCommand, uname, whoami } from './basic.ts';
import { cat, ls, md5sum, mkdir, rm, sha1sum, sha256sum, touch } from './files.ts';
import { getprop } from './getprop.ts';

/** Commands toybox provides (reachable as `toybox NAME ...`). */
const TOYBOX = new Map<string, CommandFn>([
  ['cat', cat],
  ['echo', echo],
  ['false', falseCommand],
  ['id', id],
  ['ls', ls],
  ['md5sum', md5sum],
  ['mkdir', mkdir],
  ['rm', rm],
  ['sha1sum', sha1sum],
  ['sha256sum', sha256sum],
  ['sleep', sleep],
  ['touch', touch],
  ['true', trueCommand],
  ['uname', uname],
  ['whoami', whoami],
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
  return command(rest, ctx);
};

export function createCommandTable(extra: Iterable<[string, CommandFn]> = []): Map<string, CommandFn> {
  return new Map<string, CommandFn>([
    ...TOYBOX,
    ['getprop', getprop],
    ['sh', sh],
    ['toybox', toybox],
    ...extra,
  ]);
}
