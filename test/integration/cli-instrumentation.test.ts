import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const fixtures = `${root}test/fixtures/instrumentation/`;
const corpus = `${root}test/fixtures/uiautomator/`;

function run(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [`${root}src/cli/bin.js`, ...args], {
    cwd: root,
    input: input ?? '',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('devicebridge instrumentation parse', () => {
  it('snapshot --json: one object with mode, typed result and the XML; exit 0', () => {
    const r = run(['instrumentation', 'parse', `${fixtures}snapshot-ok.txt`, '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, mode: 'snapshot', result: { nodeCount: 9, rootPresent: true } });
    expect(out.xml).toBe(readFileSync(`${corpus}04-autojs-error-dialog-zh.xml`, 'utf8'));
  });

  it('reads stdin for - (CRLF output)', () => {
    const r = run(
      ['instrumentation', 'parse', '-', '--json'],
      readFileSync(`${fixtures}snapshot-ok-crlf.txt`, 'utf8'),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, mode: 'snapshot' });
  });

  it('viewport: no xml field', () => {
    const out = JSON.parse(run(['instrumentation', 'parse', `${fixtures}viewport-ok.txt`, '--json']).stdout);
    expect(out).toMatchObject({ ok: true, mode: 'viewport', result: { width: 1080, height: 2400 } });
    expect(out).not.toHaveProperty('xml');
  });

  it.each([
    ['helper-error.txt', 'HELPER_FAILED', { errorType: 'java.util.concurrent.TimeoutException' }],
    ['crash.txt', 'HELPER_FAILED', { reason: 'crashed' }],
    ['not-found.txt', 'HELPER_FAILED', { reason: 'instrumentation-not-started' }],
    ['truncated.txt', 'HELPER_PROTOCOL_ERROR', { reason: 'truncated-output' }],
  ])('%s → {"ok":false,"error":{"code":%s}} and exit 1', (file, code, details) => {
    const r = run(['instrumentation', 'parse', `${fixtures}${file}`, '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: false, error: { code, details } });
    expect(typeof out.error.message).toBe('string');
  });

  it('human output without --json; usage errors exit 2', () => {
    const ok = run(['instrumentation', 'parse', `${fixtures}gesture-ok.txt`]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('ok: gesture');
    expect(ok.stdout).toContain('injectedEvents: 14');
    const failed = run(['instrumentation', 'parse', `${fixtures}crash.txt`]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('HELPER_FAILED: Process crashed');
    expect(run(['instrumentation', 'parse', `${fixtures}does-not-exist.txt`]).code).toBe(2);
    expect(run(['instrumentation', 'parse', '--bogus']).code).toBe(2);
  });
});

describe('devicebridge snapshot normalize', () => {
  it('XML file → normalized JSON on stdout', () => {
    const r = run(['snapshot', 'normalize', `${corpus}20-avito-search-gboard-multiwindow.xml`]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ rotation: 0, windowCount: 3, nodeCount: 323 });
    expect(out.windows[0].ref).toBe('e1');
    expect(r.stdout).not.toContain('drawing-order');
  });

  it('stdin, invalid XML exit 1, usage exit 2', () => {
    const xml = readFileSync(`${corpus}01-clash-of-clans-game-surface.xml`, 'utf8');
    expect(JSON.parse(run(['snapshot', 'normalize', '-'], xml).stdout).nodeCount).toBe(4);
    const bad = run(['snapshot', 'normalize', '-', '--json'], '<hierarchy><node></hierarchy>');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, error: { code: 'HELPER_PROTOCOL_ERROR' } });
    expect(bad.stderr).toContain('line 1 column');
    expect(run(['snapshot', 'normalize', '/nonexistent.xml']).code).toBe(2);
  });
});
