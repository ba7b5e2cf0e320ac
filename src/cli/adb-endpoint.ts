/**
 * `devicebridge adb-endpoint --lease ID --public-key FILE`: open the lease's adb endpoint for the
 * key in FILE (default `~/.android/adbkey.pub`) and print the `host:port` to `adb connect`
 * (`--json`: the whole answer, `{"endpoint": "host:port", …}`).
 * Exit codes: 0 ok, 1 failure reported by the bridge, 2 usage or invalid input (an unreadable file).
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from './exit.ts';
import { type ClientFlags, client, common, run } from './lease.ts';

export function registerAdbEndpoint(program: Command): void {
  common(program.command('adb-endpoint'))
    .description("Open the lease's adb endpoint for your adb key; prints host:port for `adb connect`")
    .option('--lease <id>', 'the lease whose device to reach')
    .option('--public-key <file>', 'your adb public key', path.join(os.homedir(), '.android', 'adbkey.pub'))
    .action(async (opts: ClientFlags & { lease?: string; publicKey: string }) => {
      if (!opts.lease) throw new UsageError('adb-endpoint needs --lease ID');
      let publicKey: string;
      try {
        publicKey = await readFile(opts.publicKey, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read --public-key ${opts.publicKey}: ${(err as Error).message}`);
      }
      const c = await client(opts);
      await run(
        opts,
        () => c.adbEndpoint(opts.lease!, publicKey),
        (e) => e.endpoint,
      );
    });
}
