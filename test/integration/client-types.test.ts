/**
 * The typed client's overloads, checked by the compiler: `test/types/client-overloads.ts` asserts
 * that `snapshot({format:'xml'})` resolves to the XML type and `snapshot()` / `{format:'json'}` to the
 * JSON type (and that the wrong uses stay errors). Runs tsc on that file alone, so `npm test` fails
 * when an overload regresses even where the project's typecheck is not run.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../support/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('devicebridge/client types', () => {
  it('type-checks the overload assertions of test/types/', async () => {
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const run = await runProcess(process.execPath, [tsc, '--noEmit', '-p', 'test/types/tsconfig.json'], {
      cwd: ROOT,
      timeoutMs: 110_000,
    });
    expect(`${run.stdout}${run.stderr}`).toBe('');
    expect(run.code).toBe(0);
  }, 120_000);
});
