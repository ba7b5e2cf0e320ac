/**
 * `input [SOURCE] [-d DISPLAY] tap|swipe|draganddrop|text|keyevent|press|roll|motionevent ...`:
 * recorded on the device, and the screen model follows what Android would do: `tap` on an editable
 * node focuses it, `text` types into the input target (printable ASCII only: the virtual keyboard's
 * key map has no events for other characters, so such a text types nothing), `keyevent` DEL
 * deletes the target's last code point (the cursor is at the end, so FORWARD_DEL deletes nothing).
 */
import type { CommandContext, CommandFn } from '../context.ts';

const USAGE = `Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]

The sources are:
      dpad
      keyboard
      mouse
      touchpad
      gamepad
      touchnavigation
      joystick
      touchscreen
      stylus
      trackball

-d: specify the display ID.
      (Default: -1 for key event, 0 for motion event if not specified.)
The commands and default sources are:
      text <string> (Default: keyboard)
      keyevent [--longpress|--duration <duration to hold key down in ms>] [--doubletap] [--async] [--delay <duration between keycodes in ms>] <key code number or name> ... (Default: keyboard)
      tap <x> <y> (Default: touchscreen)
      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      press (Default: trackball)
      roll <dx> <dy> (Default: trackball)
      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)
      keycombination [-t duration(ms)] <key code 1> <key code 2> ... (Default: keyboard, the key order is important here.)
`;

const SOURCES = new Set([
  'dpad',
  'keyboard',
  'mouse',
  'touchpad',
  'gamepad',
  'touchnavigation',
  'joystick',
  'touchscreen',
  'stylus',
  'trackball',
]);

const KEYCODES: Record<string, number> = {
  UNKNOWN: 0,
  SOFT_LEFT: 1,
  SOFT_RIGHT: 2,
  HOME: 3,
  BACK: 4,
  CALL: 5,
  ENDCALL: 6,
  STAR: 17,
  POUND: 18,
  DPAD_UP: 19,
  DPAD_DOWN: 20,
  DPAD_LEFT: 21,
  DPAD_RIGHT: 22,
  DPAD_CENTER: 23,
  VOLUME_UP: 24,
  VOLUME_DOWN: 25,
  POWER: 26,
  CAMERA: 27,
  CLEAR: 28,
  COMMA: 55,
  PERIOD: 56,
  TAB: 61,
  SPACE: 62,
  ENTER: 66,
  DEL: 67,
  MENU: 82,
  SEARCH: 84,
  PAGE_UP: 92,
  PAGE_DOWN: 93,
  ESCAPE: 111,
  FORWARD_DEL: 112,
  MOVE_HOME: 122,
  MOVE_END: 123,
  APP_SWITCH: 187,
  SLEEP: 223,
  WAKEUP: 224,
};
for (let i = 0; i < 10; i++) KEYCODES[String.fromCharCode(48 + i)] = 7 + i;
for (let i = 0; i < 26; i++) KEYCODES[String.fromCharCode(65 + i)] = 29 + i;

function keyCode(arg: string): number | undefined {
  if (/^[0-9]+$/.test(arg)) return Number(arg);
  const name = arg.toUpperCase().replace(/^KEYCODE_/, '');
  return KEYCODES[name];
}

function invalid(ctx: CommandContext, command: string): number {
  ctx.io.stderr(`Error: Invalid arguments for command: ${command}\n${USAGE}`);
  return 255;
}

function numbers(args: string[]): number[] | undefined {
  const out = args.map(Number);
  return out.every((n, i) => Number.isFinite(n) && (args[i] as string).trim() !== '') ? out : undefined;
}

export const input: CommandFn = async (argv, ctx) => {
  let args = [...argv];
  let source: string | undefined;
  let displayId: number | undefined;
  if (args[0] !== undefined && SOURCES.has(args[0])) source = args.shift();
  if (args[0] === '-d') {
    displayId = Number(args[1]);
    args = args.slice(2);
  }
  const [command, ...rest] = args;
  const record = (event: Record<string, unknown>): void =>
    ctx.android.device.recordInput({
      ...event,
      ...(source === undefined ? {} : { source }),
      ...(displayId === undefined ? {} : { displayId }),
    });
  switch (command) {
    case 'tap': {
      const n = numbers(rest);
      if (n === undefined || n.length !== 2) return invalid(ctx, command);
      record({ type: 'tap', x: n[0], y: n[1] });
      ctx.android.device.screen.tap(n[0] as number, n[1] as number);
      return 0;
    }
    case 'swipe':
    case 'draganddrop': {
      const n = numbers(rest);
      if (n === undefined || (n.length !== 4 && n.length !== 5)) return invalid(ctx, command);
      const durationMs = n[4] ?? (command === 'swipe' ? 300 : 300);
      record({ type: command, x1: n[0], y1: n[1], x2: n[2], y2: n[3], durationMs });
      return 0;
    }
    case 'text': {
      if (rest.length === 0) return invalid(ctx, command);
      const text = rest.join(' ').replaceAll('%s', ' ');
      record({ type: 'text', text });
      if (/^[\x20-\x7e]*$/.test(text)) ctx.android.device.screen.type(text);
      return 0;
    }
    case 'keyevent':
    case 'keycombination': {
      let longpress = false;
      const keys: string[] = [];
      for (let i = 0; i < rest.length; i++) {
        const arg = rest[i] as string;
        if (arg === '--longpress') longpress = true;
        else if (arg === '--doubletap' || arg === '--async') continue;
        else if (arg === '--duration' || arg === '--delay' || arg === '-t') i++;
        else keys.push(arg);
      }
      if (keys.length === 0) return invalid(ctx, command);
      for (const key of keys) {
        const code = keyCode(key);
        if (code === undefined) {
          ctx.io.stderr(
            `Exception occurred while executing '${command}':\njava.lang.IllegalArgumentException: Unknown keycode: ${key}\n`,
          );
          return 255;
        }
        record({ type: 'keyevent', key, keyCode: code, ...(longpress ? { longpress } : {}) });
        if (command === 'keyevent' && code === KEYCODES['DEL']) {
          ctx.android.device.screen.deleteBackward();
        }
      }
      return 0;
    }
    case 'press':
      record({ type: 'press' });
      return 0;
    case 'roll': {
      const n = numbers(rest);
      if (n === undefined || n.length !== 2) return invalid(ctx, command);
      record({ type: 'roll', dx: n[0], dy: n[1] });
      return 0;
    }
    case 'motionevent': {
      const [action, ...coords] = rest;
      const n = numbers(coords);
      if (
        action === undefined ||
        !/^(DOWN|UP|MOVE|CANCEL)$/i.test(action) ||
        n === undefined ||
        n.length !== 2
      ) {
        return invalid(ctx, command);
      }
      record({ type: 'motionevent', action: action.toUpperCase(), x: n[0], y: n[1] });
      return 0;
    }
    case undefined:
    case 'help':
      ctx.io.stdout(USAGE);
      return 0;
    default:
      ctx.io.stderr(`Error: Unknown command: ${command}\n${USAGE}`);
      return 255;
  }
};
