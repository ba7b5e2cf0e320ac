/** `wm size`, `wm density`, `wm dismiss-keyguard` (silent, recorded as input). */
import type { CommandFn } from '../context.ts';

export const wm: CommandFn = async (argv, ctx) => {
  const [verb] = argv;
  if (verb === 'size') {
    const { width, height } = ctx.android.device.displaySize();
    ctx.io.stdout(`Physical size: ${width}x${height}\n`);
    return 0;
  }
  if (verb === 'density') {
    ctx.io.stdout(`Physical density: ${ctx.android.device.getprop('ro.sf.lcd_density') ?? '420'}\n`);
    return 0;
  }
  if (verb === 'dismiss-keyguard') {
    ctx.android.device.recordInput({ type: 'dismiss-keyguard' });
    return 0;
  }
  if (verb === undefined || verb === 'help') {
    ctx.io.stdout(
      'Window manager (window) commands:\n  help\n  size [reset|WxH|WdpxHdp] [-d DISPLAY_ID]\n  density [reset|DENSITY] [-d DISPLAY_ID]\n  dismiss-keyguard\n',
    );
    return 0;
  }
  ctx.io.stderr(`Unknown command: ${verb}\n`);
  return 255;
};
