import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerGesture } from '../../src/cli/gesture.ts';
import { main } from '../../src/cli/main.ts';
import { buildRotate, buildTap, encodeTouchPlanBase64 } from '../../src/protocol/helper/touch-plan.ts';

let dir: string;
let stdout: string;
let stderr: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gesture-cli-'));
  stdout = '';
  stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

const cli = (...args: string[]): Promise<number> =>
  main(['node', 'devicebridge', 'gesture', 'validate', ...args]);

describe('devicebridge gesture validate', () => {
  it('registers under `gesture` so more subcommands can be added beside validate', () => {
    const program = new Command();
    registerGesture(program);
    const gesture = program.commands.find((c) => c.name() === 'gesture');
    expect(gesture?.commands.map((c) => c.name())).toEqual(['validate']);
  });

  it('exit 0 and {valid:true, errors:[]} for a valid plan (--json)', async () => {
    const path = await file('tap.json', JSON.stringify(buildTap(10, 20)));
    expect(await cli(path, '--json')).toBe(0);
    expect(stdout).toBe('{"valid":true,"errors":[]}\n');
  });

  it('exit 0 with a human summary by default', async () => {
    const path = await file(
      'rotate.json',
      JSON.stringify(buildRotate({ x: 500, y: 500 }, 200, 0, 90, 300, 10)),
    );
    expect(await cli(path)).toBe(0);
    expect(stdout).toBe('valid: transform, 2 pointers, 11 samples each, 300 ms\n');
  });

  it('exit 1 with errors naming pointer and sample for an invalid plan', async () => {
    const plan = buildTap(1, 1);
    plan.pointers[0]!.samples[1]!.offsetMs = 49;
    const path = await file('bad.json', JSON.stringify(plan));
    expect(await cli(path, '--json')).toBe(1);
    const out = JSON.parse(stdout) as { valid: boolean; errors: Array<{ path: string; message: string }> };
    expect(out.valid).toBe(false);
    expect(out.errors).toEqual([
      {
        path: 'pointers.0.samples.1.offsetMs',
        message: "the last sample's offsetMs must equal durationMs (50), got 49",
      },
    ]);
    expect(stdout.trim().split('\n')).toHaveLength(1);
  });

  it('human output for an invalid plan lists each problem', async () => {
    const path = await file('bad.json', '{"kind":"fling","durationMs":-1,"pointers":[]}');
    expect(await cli(path)).toBe(1);
    expect(stdout.split('\n')[0]).toBe('invalid: 2 problems');
    expect(stdout).toContain('kind: must be swipe (one pointer) or transform (two pointers)');
    expect(stdout).toContain('durationMs: must be an integer, 0-120000');
  });

  it('--base64 validates the helper payload form', async () => {
    const good = await file('good.b64', `${encodeTouchPlanBase64(buildTap(5, 5))}\n`);
    expect(await cli(good, '--base64', '--json')).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ valid: true, errors: [] });
    stdout = '';
    const bad = await file('bad.b64', 'not base64!');
    expect(await cli(bad, '--base64', '--json')).toBe(1);
    expect(JSON.parse(stdout)).toEqual({
      valid: false,
      errors: [{ path: '', message: 'payloadBase64 is not valid base64' }],
    });
  });

  it('invalid JSON is exit 1 with one error at path ""', async () => {
    const path = await file('broken.json', '{"kind":');
    expect(await cli(path, '--json')).toBe(1);
    const out = JSON.parse(stdout) as { errors: Array<{ path: string; message: string }> };
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]?.path).toBe('');
    expect(out.errors[0]?.message).toMatch(/^input is not valid JSON/);
  });

  it('duplicate and prototype keys are invalid (exit 1) and named, in validate and in gesture plan files', async () => {
    const plan = JSON.stringify(
      JSON.parse(Buffer.from(encodeTouchPlanBase64(buildTap(10, 20)), 'base64').toString()),
    );
    const dup = await file('dup.json', `${plan.slice(0, -1)},"protocol":"android-touch-plan-v1"}`);
    expect(await cli(dup, '--json')).toBe(1);
    const out = JSON.parse(stdout) as { errors: Array<{ path: string; message: string }> };
    expect(out.errors[0]?.message).toMatch(/duplicate key "protocol"/);
    const proto = await file('proto.json', `${plan.slice(0, -1)},"__proto__":{}}`);
    stdout = '';
    expect(await cli(proto, '--json')).toBe(1);
    expect(stdout).toContain('__proto__');
    const { buildPlan } = await import('../../src/cli/device.ts');
    await expect(buildPlan('plan', [dup])).rejects.toThrow(/duplicate key "protocol"/);
    await expect(buildPlan('plan', [proto])).rejects.toThrow(/"__proto__"/);
    // The base64 payload form (the helper's and the simulator's decoder) applies the same rules.
    const { decodeTouchPlanBase64 } = await import('../../src/protocol/helper/touch-plan.ts');
    const verdict = decodeTouchPlanBase64(
      Buffer.from(`${plan.slice(0, -1)},"__proto__":{}}`).toString('base64'),
    );
    expect(verdict.valid).toBe(false);
  });

  it('exit 2 for an unreadable file (--json: one error object on stdout) or an unknown option (nothing on stdout)', async () => {
    expect(await cli(join(dir, 'missing.json'), '--json')).toBe(2);
    expect(JSON.parse(stdout)).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ARGUMENT', retryable: false },
    });
    expect(stderr).toContain('ENOENT');
    stdout = '';
    expect(await cli('--frobnicate')).toBe(2);
    expect(stdout).toBe('');
  });
});
