/**
 * The Android adapters (android/<module>/src/main) on the host JVM against android/framework-fakes,
 * once per device profile (release/test-android-adapters.sh). Part of `npm test`: a failure names
 * the profile and carries JUnit's failure report.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, run } from '../support/android.ts';

/** Every profile the script runs by default: API levels, then OEM builds (release/test-android-adapters.sh). */
const API_LEVELS = ['23', '24', '26', '29', '31', '33', '34', '35'];
const OEM_BUILDS = ['33-vivo', '34-vivo', '34-honor', '34-miui', '33-coloros'];
const PROFILES = [...API_LEVELS, ...OEM_BUILDS];
/** Every module with adapter tests (android/<module>/src/adapter-test/java); each must run on every profile. */
const MODULES = ['glass-common', 'glass-agent', 'a11y-service', 'snapshot-helper'];

type ProfileOutcome = { ok: boolean; tests: number; modules: Map<string, number>; report: string };

/**
 * profile → its status line ("profile P: OK (N tests; module n, module n)") and the indented JUnit
 * report that follows it.
 */
function parseReport(stdout: string): Map<string, ProfileOutcome> {
  const results = new Map<string, ProfileOutcome>();
  let current: ProfileOutcome | undefined;
  for (const line of stdout.split('\n')) {
    const status = /^profile (\S+): (OK|FAILED) \((\d+) tests?[^;]*(?:; ([^)]*))?\)/.exec(line);
    if (status) {
      const modules = new Map<string, number>();
      for (const part of (status[4] ?? '').split(', ')) {
        const m = /^(\S+) (\d+)$/.exec(part);
        if (m) modules.set(m[1] ?? '', Number(m[2]));
      }
      current = { ok: status[2] === 'OK', tests: Number(status[3]), modules, report: '' };
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
    for (const module of MODULES) {
      expect(
        outcome?.modules.get(module),
        `profile ${profile} ran no ${module} adapter tests`,
      ).toBeGreaterThan(0);
    }
  });

  it('exits 0 only when every profile passed', () => {
    expect(result.code).toBe([...profiles.values()].every((p) => p.ok) ? 0 : 1);
  });
});
