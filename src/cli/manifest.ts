/**
 * `devicebridge manifest validate FILE|- [--json]` — validate a helper release manifest.
 *
 * Exit codes: 0 valid; 1 invalid manifest — including a file that is not UTF-8 or not JSON (reported
 * as one error with path "" and the parser's message) or larger than 1 MiB; 2 usage error (missing
 * argument, unknown option, unreadable file). With `--json`, stdout carries exactly one JSON object
 * `{"valid", "errors": [{"path","message"}], "manifest": <normalised manifest or null>}` whenever the
 * exit code is 0 or 1; usage errors print only to stderr. Without `--json`, a human summary.
 */
import type { Command } from 'commander';
import { type FieldError, isBridgeError } from '../errors.ts';
import { parseStrictJson } from '../strict-json.ts';
import { ExitCode } from './exit.ts';
import { readInput } from './input.ts';

/** A manifest is a few hundred bytes; anything past this is refused as invalid without parsing. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

interface ValidateOptions {
  json?: boolean;
}

export function registerManifest(program: Command): void {
  const manifest = program.command('manifest').description('Helper release manifests');
  manifest
    .command('validate')
    .description(
      'Validate a helper release manifest. Exit 0 valid, 1 invalid (incl. bad JSON), 2 usage error',
    )
    .argument('<file>', 'manifest JSON file, or - to read standard input')
    .option('--json', 'print exactly one JSON object {valid, errors, manifest} on stdout')
    .action(async (file: string, options: ValidateOptions) => {
      await validateCommand(file, options);
    });
}

async function validateCommand(file: string, options: ValidateOptions): Promise<void> {
  const { knownFieldsOf, sanitizeForTerminal, validateReleaseManifest } = await import(
    '../manifest/index.ts'
  );
  const bytes = await readInput(file, MAX_MANIFEST_BYTES + 1);
  let errors: FieldError[];
  let manifest: Record<string, unknown> | null = null;
  const parsed = parseManifestBytes(bytes);
  if ('error' in parsed) {
    errors = [parsed.error];
  } else {
    const result = validateReleaseManifest(parsed.value);
    errors = result.errors;
    manifest = result.manifest;
  }
  const valid = errors.length === 0;

  if (options.json === true) {
    process.stdout.write(`${JSON.stringify({ valid, errors, manifest })}\n`);
  } else if (manifest !== null) {
    const lines = [`valid: ${sanitizeForTerminal(`${manifest['name']} ${manifest['version']}`)}`];
    const known = knownFieldsOf(manifest['kind']);
    const unknown = Object.keys(manifest).filter((k) => !known.includes(k));
    if (unknown.length > 0) {
      lines.push(`note: unknown fields kept but not trusted: ${sanitizeForTerminal(unknown.join(', '))}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } else {
    const lines = [`invalid: ${errors.length} problem${errors.length === 1 ? '' : 's'}`];
    for (const e of errors)
      lines.push(sanitizeForTerminal(`${e.path === '' ? '(document)' : e.path}: ${e.message}`));
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (!valid) throw new ExitCode(1);
}

/**
 * Decode (UTF-8, a leading BOM is dropped) and parse with the strict JSON parser (no duplicate or
 * prototype keys, nesting at most 64 deep); failures become one error at path "" naming the rule.
 */
export function parseManifestBytes(bytes: Uint8Array): { value: unknown } | { error: FieldError } {
  if (bytes.length > MAX_MANIFEST_BYTES) {
    return { error: { path: '', message: `manifest is larger than ${MAX_MANIFEST_BYTES} bytes` } };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { error: { path: '', message: 'manifest is not valid UTF-8' } };
  }
  try {
    return { value: parseStrictJson(text, { maxBytes: MAX_MANIFEST_BYTES }) };
  } catch (err) {
    if (!isBridgeError(err)) throw err;
    return {
      error: { path: '', message: `manifest is not valid JSON: ${err.message.replace(/^JSON: /, '')}` },
    };
  }
}
