/**
 * `logcat [-d] [-T COUNT] [-v epoch]`: the device's log buffer in the `-v epoch` format; without
 * `-d` it keeps printing new entries until the shell is closed (as logcat follows). Other formats
 * are printed as epoch too; `-c` clears nothing (the buffer is the emulated system's).
 */

import type { CommandFn } from '../context.ts';
import { formatEpochLine } from '../log.ts';

/**
 * Output waiting for the host beyond which a following logcat skips new entries (logd lets a slow
 * reader fall behind and lose entries rather than grow without bound).
 */
export const LOGCAT_MAX_BACKLOG_BYTES = 256 * 1024;

export const logcat: CommandFn = async (argv, ctx) => {
  let dump = false;
  let tail: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-d') dump = true;
    else if (arg === '-c') return 0;
    else if (arg === '-T' || arg === '-t') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 0) {
        ctx.io.stderr(`logcat: -T takes a count here, got '${argv[i] ?? ''}'\n`);
        return 1;
      }
      tail = n;
      if (arg === '-t') dump = true;
    } else if (arg === '-v' || arg === '-b') i++;
  }
  const log = ctx.android.device.log;
  const all = log.entries();
  for (const e of tail === undefined ? all : all.slice(Math.max(0, all.length - tail)))
    ctx.io.stdout(formatEpochLine(e));
  if (dump) return 0;
  await new Promise<void>((resolve) => {
    const stop = log.follow((e) => {
      if ((ctx.io.backlog?.() ?? 0) > LOGCAT_MAX_BACKLOG_BYTES) return;
      ctx.io.stdout(formatEpochLine(e));
    });
    const end = () => {
      stop();
      resolve();
    };
    if (ctx.io.signal.aborted) end();
    else ctx.io.signal.addEventListener('abort', end, { once: true });
  });
  return 0;
};
