/**
 * The pure-Java cores of android/ with their JUnit 4 tests, on the host JVM
 * (release/test-android-jvm.sh). Part of `npm test`.
 */
import { describe, expect, it } from 'vitest';
import { run } from '../support/android.ts';

describe('android/ JVM tests', () => {
  it('compile with -Werror at Java 8 and pass', async () => {
    const result = await run('bash', ['release/test-android-jvm.sh'], { timeoutMs: 120_000 });
    const summary = /^OK \((\d+) tests?\)$/m.exec(result.stdout);
    expect(result.stderr + result.stdout).not.toMatch(/FAILURES!!!|error:/);
    expect(result.code).toBe(0);
    expect(summary).not.toBeNull();
    // Every test class ran (a class that fails to load would still print OK for the others).
    expect(Number(summary?.[1])).toBeGreaterThanOrEqual(57);
  }, 120_000);
});
