import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const BIN = path.join(ROOT, 'src/cli/bin.js');
const FIXTURE = path.join(ROOT, 'test/fixtures/manifests/agent-device-0.13.3.json');
const agentDevice = (): Record<string, unknown> => JSON.parse(readFileSync(FIXTURE, 'utf8'));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], stdin?: string | Buffer): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** stdout must be exactly one JSON object (plus the trailing newline). */
function oneJsonObject(stdout: string): {
  valid: boolean;
  errors: { path: string; message: string }[];
  manifest: unknown;
} {
  expect(stdout.endsWith('\n')).toBe(true);
  expect(stdout.trimEnd().split('\n')).toHaveLength(1);
  const value = JSON.parse(stdout);
  expect(Object.keys(value)).toEqual(['valid', 'errors', 'manifest']);
  return value;
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'manifest-cli-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeTemp(name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

describe('devicebridge manifest validate', () => {
  it('a valid manifest: exit 0, human summary', async () => {
    const r = await run(['manifest', 'validate', FIXTURE]);
    expect(r).toMatchObject({ code: 0, stdout: 'valid: android-snapshot-helper 0.13.3\n' });
  });

  it('a valid manifest with --json: exit 0, one object with the normalised manifest', async () => {
    const input = { ...agentDevice(), sha256: `${'AB'.repeat(32)}\n`, futureField: 1 };
    const file = writeTemp('upper.json', JSON.stringify(input));
    const r = await run(['manifest', 'validate', file, '--json']);
    expect(r.code).toBe(0);
    const out = oneJsonObject(r.stdout);
    expect(out).toEqual({ valid: true, errors: [], manifest: { ...input, sha256: 'ab'.repeat(32) } });
  });

  it('an invalid manifest: exit 1, one line per error; --json lists them with manifest null', async () => {
    const file = writeTemp(
      'bad.json',
      JSON.stringify({ ...agentDevice(), installArgs: ['install', '-r', '-r'] }),
    );
    const human = await run(['manifest', 'validate', file]);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('invalid: 1 problem\ninstallArgs.2: "-r" appears more than once\n');

    const json = await run(['manifest', 'validate', '--json', file]);
    expect(json.code).toBe(1);
    expect(oneJsonObject(json.stdout)).toEqual({
      valid: false,
      errors: [{ path: 'installArgs.2', message: '"-r" appears more than once' }],
      manifest: null,
    });
  });

  it('bad JSON on stdin: exit 1 with one error at path ""', async () => {
    const r = await run(['manifest', 'validate', '-', '--json'], '{"name": ');
    expect(r.code).toBe(1);
    const out = oneJsonObject(r.stdout);
    expect(out.valid).toBe(false);
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]?.path).toBe('');
    expect(out.errors[0]?.message).toMatch(/^manifest is not valid JSON: /);
  });

  it('a valid manifest on stdin (with a UTF-8 BOM): exit 0', async () => {
    const r = await run(['manifest', 'validate', '-'], `\ufeff${readFileSync(FIXTURE, 'utf8')}`);
    expect(r).toMatchObject({ code: 0, stdout: 'valid: android-snapshot-helper 0.13.3\n' });
  });

  it('escapes control characters from the input in human output', async () => {
    const r = await run(
      ['manifest', 'validate', '-'],
      JSON.stringify({ ...agentDevice(), name: '\u001b[31mx' }),
    );
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).toContain('name: ');
  });

  it('5,000 nested [ in an unknown field: exit 1, one JSON object naming the depth limit, no stack trace', async () => {
    const fields = JSON.stringify(agentDevice()).slice(0, -1);
    const file = writeTemp('deep.json', `${fields},"x":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    const r = await run(['manifest', 'validate', file, '--json']);
    expect(r.code).toBe(1);
    const out = oneJsonObject(r.stdout);
    expect(out.valid).toBe(false);
    expect(out.manifest).toBeNull();
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]?.message).toMatch(/nest|depth/i);
    expect(out.errors[0]?.message).toContain('64');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const human = await run(['manifest', 'validate', file]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^invalid: 1 problem\n/);
    expect(human.stderr).not.toMatch(/\n\s+at /);
  });

  it('duplicate and prototype keys are invalid, and the error names the key', async () => {
    const fields = JSON.stringify(agentDevice()).slice(0, -1);
    const dup = await run(['manifest', 'validate', '-', '--json'], `${fields},"sha256":"${'a'.repeat(64)}"}`);
    expect(dup.code).toBe(1);
    const dupOut = oneJsonObject(dup.stdout);
    expect(dupOut.errors).toHaveLength(1);
    expect(dupOut.errors[0]?.message).toContain('"sha256"');
    expect(dupOut.errors[0]?.message).toMatch(/duplicate/);
    expect(dupOut.errors[0]?.message).not.toContain('a'.repeat(64));

    const proto = await run(
      ['manifest', 'validate', '-', '--json'],
      `${fields},"__proto__":{"installArgs":["install","--user","0"]}}`,
    );
    expect(proto.code).toBe(1);
    const protoOut = oneJsonObject(proto.stdout);
    expect(protoOut.valid).toBe(false);
    expect(protoOut.errors[0]?.message).toContain('"__proto__"');
  });

  it('usage errors exit 2: missing file (--json: one error object on stdout), missing argument, unknown option', async () => {
    const missing = await run(['manifest', 'validate', path.join(dir, 'nope.json'), '--json']);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ARGUMENT', retryable: false },
    });
    expect(missing.stdout.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('ENOENT');

    const noArg = await run(['manifest', 'validate']);
    expect(noArg).toMatchObject({ code: 2, stdout: '' });
    expect(noArg.stderr).toContain("missing required argument 'file'");

    const unknown = await run(['manifest', 'validate', FIXTURE, '--bogus']);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain("unknown option '--bogus'");
  });
});
