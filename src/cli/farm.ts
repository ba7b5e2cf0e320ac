/**
 * Farm commands of a lease (issue 14) over the HTTP API (env DEVICEBRIDGE_URL, DEVICEBRIDGE_TOKEN):
 *   devicebridge shell --lease ID [--command LINE] [--timeout MS] [--max-output BYTES] [--json] -- ARGV…
 * `shell` prints the command's stdout and stderr as they came and exits with its exit status (with
 * --json: one JSON object, and the same exit status); bridge failures exit 1, invalid input 2.
 */
import type { Command } from 'commander';
import { ExitCode, UsageError } from './exit.ts';
import { intFlag } from './input.ts';
import { type ClientFlags, callBridge, client, common } from './lease.ts';

export function registerFarm(program: Command): void {
  common(
    program
      .command('shell')
      .description('Run one command on a leased device (needs the shell token capability)')
      .argument('[argv...]', 'the command and its arguments (after --), each quoted by the bridge'),
  )
    .requiredOption('--lease <id>', 'the lease')
    .option('--command <line>', 'a shell command line run as given, instead of ARGV')
    .option('--timeout <ms>', 'deadline of the command in ms (default 30000)')
    .option('--max-output <bytes>', 'cap of stdout and of stderr each (default 1 MiB)')
    .action(
      async (
        argv: string[],
        opts: ClientFlags & { lease: string; command?: string; timeout?: string; maxOutput?: string },
      ) => {
        if (argv.length > 0 === (opts.command !== undefined)) {
          throw new UsageError('give the command as ARGV after -- or as --command LINE (one of them)');
        }
        const timeoutMs = intFlag('--timeout', opts.timeout, 7);
        const maxOutputBytes = intFlag('--max-output', opts.maxOutput, 8);
        const c = await client(opts);
        const result = await callBridge(opts, () =>
          c.shell(opts.lease, {
            ...(opts.command === undefined ? { argv } : { command: opts.command }),
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
            ...(maxOutputBytes === undefined ? {} : { maxOutputBytes }),
          }),
        );
        if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else {
          process.stdout.write(result.stdout);
          process.stderr.write(result.stderr);
          if (result.truncated) process.stderr.write('devicebridge: output truncated (--max-output)\n');
        }
        if (result.exitCode !== 0) throw new ExitCode(result.exitCode);
      },
    );
}
