/**
 * `devicebridge snapshot ...`: the snapshot command group.
 *
 *   snapshot normalize [FILE|-] [--pretty]   uiautomator XML → normalized snapshot JSON on stdout;
 *                                            invalid XML → exit 1 (error on stderr, or as
 *                                            {"ok":false,"error":...} on stdout with --json);
 *                                            unreadable input → exit 2.
 *
 * The group is created once by `registerSnapshot`, which returns it, so device-backed subcommands
 * (`snapshot --lease ID`, a later issue) are added next to `normalize` in `registerSnapshot`.
 */
import type { Command } from 'commander';
import { isBridgeError } from '../errors.ts';
import { normalizeSnapshot } from '../snapshot/normalize.ts';
import { EXIT_FAILURE, ExitCode } from './exit.ts';
import { inputText, readInputBytes } from './instrumentation.ts';
import { addLeaseSnapshot } from './lease.ts';

export function registerSnapshot(program: Command): Command {
  const group = program
    .command('snapshot')
    .description('UI hierarchy snapshots: --lease ID to capture, or normalize');
  addNormalize(group);
  addLeaseSnapshot(group);
  return group;
}

function addNormalize(group: Command): void {
  group
    .command('normalize')
    .description('Normalize a uiautomator XML dump into the snapshot JSON tree')
    .argument('[file]', 'XML file, or - for stdin', '-')
    .option('--pretty', 'indent the JSON')
    .option('--json', 'on failure, print {"ok":false,"error":...} on stdout too')
    .action(async (file: string, opts: { pretty?: boolean; json?: boolean }) => {
      const xml = inputText(await readInputBytes(file));
      let snapshot: ReturnType<typeof normalizeSnapshot>;
      try {
        snapshot = normalizeSnapshot(xml);
      } catch (err) {
        if (!isBridgeError(err)) throw err;
        if (opts.json) process.stdout.write(`${JSON.stringify({ ok: false, error: err.toJSON() })}\n`);
        process.stderr.write(`devicebridge: ${err.code}: ${err.message}\n`);
        throw new ExitCode(EXIT_FAILURE);
      }
      process.stdout.write(`${JSON.stringify(snapshot, null, opts.pretty ? 2 : undefined)}\n`);
    });
}
