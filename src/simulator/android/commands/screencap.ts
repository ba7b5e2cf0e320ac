/**
 * `screencap [-p] [-d DISPLAY]`: the emulated screen (see ../screen/render.ts) at the device's
 * `wm size`. With `-p` a PNG (what `adb exec-out screencap -p` reads); without it the raw format
 * of Android 8+: width, height, pixel format (1 = RGBA_8888), colour space (0), then RGBA pixels.
 * A file argument writes there instead of stdout.
 */
import type { CommandFn } from '../context.ts';
import { resolvePath } from '../context.ts';
import { encodePng } from '../screen/png-encoder.ts';
import { renderScreen, touchPoints } from '../screen/render.ts';

/** How many recent touches the screen shows. */
export const SHOWN_TOUCHES = 5;

function rawRgba(width: number, height: number, rgb: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + width * height * 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, width, true);
  view.setUint32(4, height, true);
  view.setUint32(8, 1, true);
  view.setUint32(12, 0, true);
  for (let i = 0, j = 16; i < rgb.length; i += 3, j += 4) {
    out[j] = rgb[i] as number;
    out[j + 1] = rgb[i + 1] as number;
    out[j + 2] = rgb[i + 2] as number;
    out[j + 3] = 255;
  }
  return out;
}

export const screencap: CommandFn = async (argv, ctx) => {
  let png = false;
  let file: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-p') png = true;
    else if (arg === '-d') i++;
    else if (arg === '-h') {
      ctx.io.stdout('usage: screencap [-hp] [-d display-id] [FILENAME]\n');
      return 0;
    } else if (arg.startsWith('-')) {
      ctx.io.stderr(`screencap: invalid option -- '${arg.slice(1)}'\n`);
      return 1;
    } else file = arg;
  }
  const device = ctx.android.device;
  const size = device.displaySize();
  const touches = touchPoints(device.inputEvents()).slice(-SHOWN_TOUCHES);
  const canvas = renderScreen(size, device.uiXml(), touches);
  if (file?.endsWith('.png')) png = true;
  const bytes = png
    ? encodePng(size.width, size.height, canvas.pixels)
    : rawRgba(size.width, size.height, canvas.pixels);
  if (file === undefined) {
    ctx.io.stdout(bytes);
    return 0;
  }
  ctx.android.fs.writeFile(resolvePath(ctx, file), bytes);
  return 0;
};
