/**
 * The Android adapters (android/<module>/src/main) on the host JVM against android/framework-fakes,
 * once per device profile (release/test-android-adapters.sh). Part of `npm test`: a failure names
 * the profile and carries JUnit's failure report.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, run } from '../support/android.ts';

/** Every profile the script runs by default: API levels, then OEM builds (release/test-android-adapters.sh). */
const API_LEVELS = ['23', '26', '29', '31', '33', '34', '35'];
const OEM_BUILDS = ['33-vivo', '34-vivo', '34-honor', '34-miui', '33-coloros'];
const PROFILES = [...API_LEVELS, ...OEM_BUILDS];

/** profile → its status line and the indented JUnit report that follows it. */
function parseReport(stdout: string): Map<string, { ok: boolean; tests: number; report: string }> {
  const results = new Map<string, { ok: boolean; tests: number; report: string }>();
  let current: { ok: boolean; tests: number; report: string } | undefined;
  for (const line of stdout.split('\n')) {
    const status = /^profile (\S+): (OK|FAILED) \((\d+) tests?/.exec(line);
    if (status) {
      current = { ok: status[2] === 'OK', tests: Number(status[3]), report: '' };
      results.set(status[1] ?? '', current);
    } else if (current && line.startsWith('  ')) {
      current.report += `${line.slice(2)}\n`;
    }
  }
  return results;
}

describe('android/ adapters on the framework fakes', () => {
  let result: RunResult;
  let profiles: ReturnType<typeof parseReport>;

  beforeAll(async () => {
    result = await run('bash', ['release/test-android-adapters.sh'], { timeoutMs: 300_000 });
    profiles = parseReport(result.stdout);
  }, 300_000);

  it('compile against the fakes (never android.jar)', () => {
    expect(result.stderr).not.toMatch(/error:/);
    expect(profiles.size, result.stderr + result.stdout).toBe(PROFILES.length);
  });

  it.each(PROFILES)('pass on profile %s', (profile) => {
    const outcome = profiles.get(profile);
    expect(outcome, `profile ${profile} did not run:\n${result.stderr}`).toBeDefined();
    expect(outcome?.report ?? '', `profile ${profile} failed:\n${outcome?.report}`).toBe('');
    expect(outcome?.ok, `profile ${profile} failed:\n${outcome?.report}`).toBe(true);
    expect(outcome?.tests).toBeGreaterThanOrEqual(20);
  });

  it('exits 0 only when every profile passed', () => {
    expect(result.code).toBe([...profiles.values()].every((p) => p.ok) ? 0 : 1);
  });
});
