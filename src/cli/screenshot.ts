/**
 * `devicebridge screenshot --lease ID -o FILE.png [--deadline MS]`: the leased device's screen as
 * PNG through the HTTP API (`-o -` writes the bytes to stdout). Human output names the file and the
 * size; `--json` prints `{file, width, height, bytes, etag}`.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from './exit.ts';
import { intFlag } from './input.ts';
import { type ClientFlags, client, common, run } from './lease.ts';

export function registerScreenshot(program: Command): void {
  common(program.command('screenshot').description("The leased device's screen as PNG"))
    .option('--lease <id>', 'lease whose device to capture')
    .option('-o, --output <file>', 'PNG file to write (- for stdout)')
    .option('--deadline <ms>', 'deadline of the capture in ms (default 20000)')
    .action(async (opts: ClientFlags & { lease?: string; output?: string; deadline?: string }) => {
      if (!opts.lease) throw new UsageError('screenshot needs --lease ID');
      if (!opts.output) throw new UsageError('screenshot needs -o FILE.png (or -o - for stdout)');
      const deadlineMs = opts.deadline === undefined ? undefined : intFlag('--deadline', opts.deadline, 7);
      const c = await client(opts);
      const output = opts.output;
      if (output === '-') {
        const shot = await c.screenshot(opts.lease, deadlineMs === undefined ? {} : { deadlineMs });
        if (!shot.notModified) process.stdout.write(shot.png);
        return;
      }
      await run(
        opts,
        async () => {
          const shot = await c.screenshot(opts.lease!, deadlineMs === undefined ? {} : { deadlineMs });
          if (shot.notModified) throw new Error('unexpected 304 without If-None-Match');
          await writeFile(output, shot.png);
          return {
            file: output,
            width: shot.width,
            height: shot.height,
            bytes: shot.png.length,
            etag: shot.etag,
          };
        },
        (s) => `${s.file}: ${s.width}x${s.height} PNG, ${s.bytes} bytes`,
      );
    });
}
