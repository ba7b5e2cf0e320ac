/**
 * The one shell-quoting function. Every argument that reaches `adb shell` goes through
 * `quoteShellArg`; command names are literals checked by `shellCommand`. Values with NUL, CR or LF
 * are refused: they cannot be carried faithfully through `adb shell` on every device.
 */
import { BridgeError } from '../errors.ts';

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;
const COMMAND = /^[a-z][a-z0-9_.-]*$/;

export function quoteShellArg(value: string | number): string {
  const s = String(value);
  if (/[\0\r\n]/.test(s)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `shell argument ${JSON.stringify(s.slice(0, 40))} contains NUL or a line break`,
    );
  }
  if (s !== '' && SAFE.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `command arg...` with every argument quoted; `command` must be a plain literal name. */
export function shellCommand(command: string, ...args: Array<string | number>): string {
  if (!COMMAND.test(command))
    throw new BridgeError('INVALID_ARGUMENT', `not a command name: ${JSON.stringify(command)}`);
  return [command, ...args.map(quoteShellArg)].join(' ');
}
