/**
 * The glass companions' fixture releases (seed 001): the agent as a minimal dex jar defining the
 * main class the simulator runs, and the a11y service fixture APK, published into a bridge's store
 * as `glass-agent` (app-process-jar) and `glass-a11y` (accessibility-service-apk).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { ArtifactStore } from '../../src/artifacts/store.ts';
import { type PublishResult, publishRelease } from '../../src/releases/publish.ts';
import { fixture, type TimedAnswer } from './bridge.ts';
import { GLASS_AGENT_MAIN } from './device-bed.ts';
import { buildDexJar } from './dex-jar.ts';

/** Write a glass agent jar into `dir` (`extra` classes change its bytes: another release). */
export async function writeGlassAgentJar(dir: string, extra: string[] = []): Promise<string> {
  const jar = path.join(dir, `glass-agent-${extra.length}.jar`);
  await writeFile(jar, buildDexJar([GLASS_AGENT_MAIN, ...extra]));
  return jar;
}

/** Publish the agent jar (version `version`) as `glass-agent`. */
export async function publishGlassAgent(
  store: ArtifactStore,
  dir: string,
  options: { version?: string; extra?: string[]; mainClass?: string } = {},
): Promise<PublishResult> {
  const extra = options.extra ?? [];
  const mainClass = options.mainClass ?? GLASS_AGENT_MAIN;
  const jar = await writeGlassAgentJar(dir, mainClass === GLASS_AGENT_MAIN ? extra : [...extra, mainClass]);
  return publishRelease(store, {
    apkPath: jar,
    name: 'glass-agent',
    version: options.version ?? '1.0.0',
    kind: 'app-process-jar',
    mainClass,
    socketName: 'glass-agent',
  });
}

/** Publish the a11y fixture APK as `glass-a11y`. */
export function publishGlassA11y(store: ArtifactStore): Promise<PublishResult> {
  return publishRelease(store, {
    apkPath: fixture('a11y-service.apk'),
    name: 'glass-a11y',
    version: '0.1.0',
    kind: 'accessibility-service-apk',
    socketName: 'glass-a11y',
  });
}

/** Both companions. */
export async function publishGlassFixtures(store: ArtifactStore, dir: string): Promise<void> {
  await publishGlassAgent(store, dir);
  await publishGlassA11y(store);
}

/** The glass agent's per-request deadline (GlassAgentOptions.requestTimeoutMs's default). */
export const AGENT_DEADLINE_MS = 30_000;

/**
 * The glass agent's clipboard set, text and key calls on a lease (through `api`): each 200 (a call
 * past the agent's deadline would have ended TIMEOUT), the clipboard really set on the device
 * (`clipboard()`). Resolves their times (ms), for reports.
 */
export async function glassAgentCalls(
  api: (method: string, path: string, body?: unknown) => Promise<TimedAnswer>,
  leaseId: string,
  clipboard: () => string | null,
  what: string,
): Promise<number[]> {
  const base = `/v1/leases/${leaseId}`;
  const text = `after ${what}`;
  const calls: Array<[string, () => Promise<TimedAnswer>]> = [
    ['clipboard', () => api('PUT', `${base}/clipboard`, { text })],
    ['text', () => api('POST', `${base}/text`, { text: 'x' })],
    ['key', () => api('POST', `${base}/keys`, { chord: 'ctrl+a' })],
  ];
  const ms: number[] = [];
  for (const [name, call] of calls) {
    const res = await call();
    expect(res.status, `${what}: ${name}: ${JSON.stringify(res.body).slice(0, 600)}`).toBe(200);
    ms.push(res.ms);
  }
  expect(clipboard(), what).toBe(text);
  return ms;
}
