/**
 * `devicebridge gesture ...` — touch gestures (`android-touch-plan-v1`).
 *
 * `gesture validate [FILE|-] [--base64] [--json]`: validate a touch plan read from FILE or standard
 * input (the default, also `-`). With `--base64` the input is the base64 payload the helper receives
 * (`-e payloadBase64`), surrounding whitespace ignored. Exit codes: 0 valid; 1 invalid — including
 * input that is not UTF-8, not JSON, not base64, or larger than 16 MiB (one error with path "");
 * 2 usage error (unknown option, unreadable file). With `--json`, stdout carries exactly one JSON
 * object `{"valid", "errors": [{"path","message"}]}` whenever the exit code is 0 or 1; usage errors
 * print only to stderr. Without `--json`, a human summary.
 *
 * Each subcommand registers itself on the `gesture` command (`registerGestureValidate` below), so
 * lease-bound subcommands can be added beside it.
 */
import type { Command } from 'commander';
import { isBridgeError } from '../errors.ts';
import { parseStrictJson } from '../strict-json.ts';
import { ExitCode } from './exit.ts';
import { readInput } from './input.ts';
import { addLeaseGesture } from './lease.ts';

/** A dense 120 s two-pointer plan is a few MB of JSON; anything past this is refused unparsed. */
export const MAX_TOUCH_PLAN_BYTES = 16 * 1024 * 1024;

interface ValidateOptions {
  base64?: boolean;
  json?: boolean;
}

export function registerGesture(program: Command): void {
  const gesture = program
    .command('gesture')
    .description('Touch gestures (android-touch-plan-v1): --lease ID <kind> ..., or validate');
  registerGestureValidate(gesture);
  addLeaseGesture(gesture);
}

export function registerGestureValidate(gesture: Command): void {
  gesture
    .command('validate')
    .description('Validate an android-touch-plan-v1 touch plan. Exit 0 valid, 1 invalid, 2 usage error')
    .argument('[file]', 'touch plan JSON file (base64 text with --base64), or - for standard input', '-')
    .option('--base64', 'the input is the base64-encoded payload (as passed to -e payloadBase64)')
    .option('--json', 'print exactly one JSON object {valid, errors} on stdout')
    .action(async (file: string, options: ValidateOptions) => {
      await validateCommand(file, options);
    });
}

type Verdict = Awaited<ReturnType<typeof verdictOf>>;

async function verdictOf(bytes: Uint8Array, base64: boolean) {
  const { decodeTouchPlanBase64, validateTouchPlan } = await import('../protocol/helper/touch-plan.ts');
  const fail = (message: string) => ({ valid: false as const, errors: [{ path: '', message }] });
  if (bytes.length > MAX_TOUCH_PLAN_BYTES) return fail(`input is larger than ${MAX_TOUCH_PLAN_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail('input is not valid UTF-8');
  }
  if (base64) return decodeTouchPlanBase64(text);
  let value: unknown;
  try {
    value = parseStrictJson(text, { maxBytes: MAX_TOUCH_PLAN_BYTES });
  } catch (err) {
    if (!isBridgeError(err)) throw err;
    return fail(`input is not valid JSON: ${err.message.replace(/^JSON: /, '')}`);
  }
  return validateTouchPlan(value);
}

/** Keep terminal output inert: control characters become `\uXXXX`. */
function printable(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function humanSummary(verdict: Verdict): string {
  if (verdict.valid) {
    const { plan } = verdict;
    const samples = plan.pointers[0]?.samples.length ?? 0;
    const pointers = `${plan.pointers.length} pointer${plan.pointers.length === 1 ? '' : 's'}`;
    return `valid: ${plan.kind}, ${pointers}, ${samples} samples each, ${plan.durationMs} ms\n`;
  }
  const lines = [`invalid: ${verdict.errors.length} problem${verdict.errors.length === 1 ? '' : 's'}`];
  for (const e of verdict.errors)
    lines.push(printable(`${e.path === '' ? '(input)' : e.path}: ${e.message}`));
  return `${lines.join('\n')}\n`;
}

async function validateCommand(file: string, options: ValidateOptions): Promise<void> {
  const bytes = await readInput(file, MAX_TOUCH_PLAN_BYTES + 1);
  const verdict = await verdictOf(bytes, options.base64 === true);
  if (options.json === true) {
    process.stdout.write(
      `${JSON.stringify({ valid: verdict.valid, errors: verdict.valid ? [] : verdict.errors })}\n`,
    );
  } else {
    process.stdout.write(humanSummary(verdict));
  }
  if (!verdict.valid) throw new ExitCode(1);
}
