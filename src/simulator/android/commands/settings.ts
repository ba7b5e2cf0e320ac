/**
 * `settings [--user U] get|put|delete|list NAMESPACE KEY [VALUE [TAG] [default]]`, following
 * SettingsService.MyShellCommand: errors on stderr with exit 255 (`Bad arguments` when `put` has no
 * VALUE argument, `Invalid namespace 'x'`, `Too many arguments`); `get` of an unset key prints `null`.
 * `put` with an empty VALUE fails the same way (`Bad arguments`, exit 255) and leaves the value as it
 * was: on a device an empty argument does not survive the trip through `adb shell` (hosts restore an
 * empty setting with `delete`, which prints `Deleted N rows`).
 */
import type { CommandFn } from '../context.ts';
import { isSettingsNamespace, type SettingsNamespace } from '../settings.ts';

const HELP = `Settings provider (settings) commands:
  help
      Print this help text.
  get [--user <USER_ID> | current] NAMESPACE KEY
      Retrieve the current value of KEY.
  put [--user <USER_ID> | current] NAMESPACE KEY VALUE [TAG] [default]
      Change the contents of KEY to VALUE.
      TAG to associate with the setting.
      {default} to set as the default, case-insensitive only for global/secure namespace
  delete [--user <USER_ID> | current] NAMESPACE KEY
      Delete the entry for KEY.
  reset [--user <USER_ID> | current] NAMESPACE {PACKAGE_NAME | RESET_MODE}
      Reset the global/secure table for a package with mode.
      RESET_MODE is one of {untrusted_defaults, untrusted_clear, trusted_defaults}, case-insensitive
  list [--user <USER_ID> | current] NAMESPACE
      Print all defined keys.
      NAMESPACE is one of {system, secure, global}, case-insensitive
`;

/**
 * `settings list` output: `key=value` lines sorted as whole lines (SettingsService sorts the
 * formatted lines with `Collections.sort`, so `a.b=1` comes before `a=2`); an unset value is `null`.
 */
export function listLines(rows: ReadonlyArray<[string, string | null]>): string {
  return rows
    .map(([key, value]) => `${key}=${value ?? 'null'}`)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((line) => `${line}\n`)
    .join('');
}

type Verb = 'get' | 'put' | 'delete' | 'list' | 'reset';

export const settings: CommandFn = async (argv, ctx) => {
  const first = argv[0];
  if (first === undefined || first === 'help' || first === '-h') {
    ctx.io.stdout(HELP);
    return 0;
  }
  const fail = (message: string): number => {
    ctx.io.stderr(`${message}\n`);
    return 255;
  };
  let verb: Verb | undefined;
  let table: SettingsNamespace | undefined;
  let key: string | undefined;
  let value: string | undefined;
  let valid = false;
  let userSeen = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const more = i + 1 < argv.length;
    if (arg === '--user') {
      if (userSeen) return fail('Invalid user: --user specified more than once');
      userSeen = true;
      const user = argv[++i];
      if (user === undefined) return fail('Error: argument expected after --user');
      if (user === 'all') return fail('Invalid user: all');
      if (user !== 'current' && user !== 'cur' && user !== '0') return fail(`Invalid user: ${user}`);
    } else if (verb === undefined) {
      const lower = arg.toLowerCase();
      if (lower !== 'get' && lower !== 'put' && lower !== 'delete' && lower !== 'list' && lower !== 'reset') {
        return fail(`Invalid command: ${arg}`);
      }
      verb = lower;
    } else if (table === undefined) {
      const lower = arg.toLowerCase();
      if (!isSettingsNamespace(lower)) return fail(`Invalid namespace '${arg}'`);
      table = lower;
      if (verb === 'list') {
        valid = true;
        break;
      }
    } else if (verb === 'reset') {
      valid = true;
      break;
    } else if (verb === 'get' || verb === 'delete') {
      key = arg;
      if (more) return fail('Too many arguments');
      valid = true;
      break;
    } else if (key === undefined) {
      key = arg;
    } else if (value === undefined) {
      value = arg;
      valid = true;
    } else {
      // TAG and `default`: accepted and ignored.
      if (i + 2 < argv.length) return fail('Too many arguments');
      break;
    }
  }
  if (!valid || verb === undefined || table === undefined) return fail('Bad arguments');
  const store = ctx.android.settings;
  switch (verb) {
    case 'get':
      ctx.io.stdout(`${store.get(table, key as string) ?? 'null'}\n`);
      return 0;
    case 'put':
      if (value === '') return fail('Bad arguments');
      store.put(table, key as string, value as string);
      return 0;
    case 'delete':
      ctx.io.stdout(`Deleted ${store.delete(table, key as string) ? 1 : 0} rows\n`);
      return 0;
    case 'list':
      ctx.io.stdout(listLines(store.list(table)));
      return 0;
    case 'reset':
      return 0;
  }
};
