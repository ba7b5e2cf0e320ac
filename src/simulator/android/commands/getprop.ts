/** `getprop [KEY [DEFAULT]]`: one value, or every property as `[key]: [value]` lines. */
import type { CommandFn } from '../context.ts';

export const getprop: CommandFn = async (argv, ctx) => {
  const device = ctx.android.device;
  const key = argv[0];
  if (key === undefined) {
    ctx.io.stdout(
      device
        .allProps()
        .map(([k, v]) => `[${k}]: [${v}]\n`)
        .join(''),
    );
    return 0;
  }
  ctx.io.stdout(`${device.getprop(key) ?? argv[1] ?? ''}\n`);
  return 0;
};
