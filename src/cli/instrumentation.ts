import type { Command } from 'commander';
import { interpretSnapshotResult } from '../protocol/helper/chunks.ts';
import { parseInstrumentationOutput } from '../protocol/helper/instrumentation-output.ts';
import { decodeUtf8 } from '../protocol/helper/utf8.ts';
import { EXIT_FAILURE, ExitCode } from './exit.ts';
import { readInput } from './input.ts';

/** Bytes of FILE, or of stdin for `-` / undefined. Unreadable input is a usage error. */
export function readInputBytes(file: string | undefined): Promise<Buffer> {
  return readInput(file);
}

/** UTF-8 text of input bytes. */
export function inputText(bytes: Buffer): string {
  return decodeUtf8(bytes);
}

export function registerInstrumentation(program: Command): void {
  const group = program
    .command('instrumentation')
    .description('Snapshot helper instrumentation output tools');
  group
    .command('parse')
    .description('Parse raw `am instrument -w` output of the snapshot helper')
    .argument('[file]', 'output file, or - for stdin', '-')
    .option('--json', 'print one JSON object')
    .action(async (file: string, opts: { json?: boolean }) => {
      const text = inputText(await readInputBytes(file));
      const outcome = interpretSnapshotResult(parseInstrumentationOutput(text));
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify(outcome.ok ? outcome : { ok: false, error: outcome.error.toJSON() })}\n`,
        );
      } else if (outcome.ok) {
        const lines = [`ok: ${outcome.mode}`];
        for (const [key, value] of Object.entries(outcome.result)) {
          if (key !== 'extra') lines.push(`  ${key}: ${String(value)}`);
        }
        if (outcome.mode === 'snapshot') lines.push(`  xml: ${Buffer.byteLength(outcome.xml)} bytes`);
        process.stdout.write(`${lines.join('\n')}\n`);
      } else {
        const lines = [`${outcome.error.code}: ${outcome.error.message}`];
        for (const [key, value] of Object.entries(outcome.error.details ?? {})) {
          lines.push(`  ${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
        }
        process.stderr.write(`${lines.join('\n')}\n`);
      }
      if (!outcome.ok) throw new ExitCode(EXIT_FAILURE);
    });
}
