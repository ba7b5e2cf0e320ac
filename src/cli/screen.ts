/**
 * `devicebridge screen --lease ID --seconds N -o FILE.h264`: the leased device's live screen for N
 * seconds as a raw H.264 Annex B stream (`-o -` writes it to stdout), through the typed client's
 * WebSocket. It starts at a key frame (with the SPS/PPS before it); a stretch the bridge skipped
 * because the writer fell behind is left out. Human output names the file, the frames and the
 * picture; `--json` prints `{file, frames, bytes, skipped, width, height, codec, end}`.
 */
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { UsageError } from './exit.ts';
import { intFlag } from './input.ts';
import { type ClientFlags, callBridge, client, common, run } from './lease.ts';

interface Recorded {
  file: string;
  frames: number;
  bytes: number;
  skipped: number;
  width: number | null;
  height: number | null;
  codec: string | null;
  /** Why the stream ended before the time was up (`lease-ended`, …), or null. */
  end: string | null;
}

function write(out: Writable, bytes: Uint8Array): Promise<void> {
  return out.write(bytes) ? Promise.resolve() : new Promise((resolve) => out.once('drain', resolve));
}

export function registerScreen(program: Command): void {
  common(program.command('screen').description("Record the leased device's live screen as raw H.264"))
    .option('--lease <id>', 'lease whose device to record')
    .option('--seconds <n>', 'how long to record (default 10)')
    .option('-o, --output <file>', 'H.264 (Annex B) file to write (- for stdout)')
    .option('--max-size <pixels>', 'longer side of the picture at most (when this starts the stream)')
    .action(
      async (opts: ClientFlags & { lease?: string; seconds?: string; output?: string; maxSize?: string }) => {
        if (!opts.lease) throw new UsageError('screen needs --lease ID');
        if (!opts.output) throw new UsageError('screen needs -o FILE.h264 (or -o - for stdout)');
        const seconds = intFlag('--seconds', opts.seconds, 5) ?? 10;
        if (seconds < 1) throw new UsageError('--seconds must be at least 1');
        const maxSize = intFlag('--max-size', opts.maxSize, 5);
        const c = await client(opts);
        const output = opts.output;
        const record = async (): Promise<Recorded> => {
          const stop = AbortSignal.timeout(seconds * 1000);
          const screen = await c.screen(opts.lease!, {
            ...(maxSize === undefined ? {} : { maxSize }),
            signal: stop,
          });
          const out = output === '-' ? process.stdout : createWriteStream(output);
          const got: Recorded = {
            file: output,
            frames: 0,
            bytes: 0,
            skipped: 0,
            width: null,
            height: null,
            codec: null,
            end: null,
          };
          try {
            for await (const event of screen) {
              if (event.type === 'start') {
                got.width = event.width;
                got.height = event.height;
                got.codec = event.codec;
              } else if (event.type === 'skipped') got.skipped += event.frames;
              else if (event.type === 'end') got.end = event.reason;
              else if (event.type === 'packet' && (got.frames > 0 || event.key)) {
                await write(out, event.data);
                got.frames++;
                got.bytes += event.data.byteLength;
              }
            }
          } finally {
            screen.close();
            if (out !== process.stdout) await new Promise<void>((resolve) => out.end(resolve));
          }
          return got;
        };
        if (output === '-') {
          await callBridge(opts, record);
          return;
        }
        await run(
          opts,
          record,
          (r) =>
            `${r.file}: ${r.frames} frames, ${r.bytes} bytes of ${r.codec ?? 'H.264'} ${r.width ?? '?'}x${r.height ?? '?'}` +
            (r.skipped > 0 ? `, ${r.skipped} skipped` : '') +
            (r.end === null ? '' : ` (the stream ended: ${r.end})`),
        );
      },
    );
}
