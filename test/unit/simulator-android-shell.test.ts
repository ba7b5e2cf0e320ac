import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid } from '../../src/simulator/android/index.ts';
import { parse } from '../../src/simulator/android/shell/parser.ts';
import { StdinReader } from '../../src/simulator/android/shell/stdin.ts';
import { quoteArg, ShellSyntaxError, tokenize } from '../../src/simulator/android/shell/tokenizer.ts';

const sim = () => createSimAndroid({ serial: 'shell-test', seed: 7 });

describe('tokenizer', () => {
  it('splits words, operators and redirections', () => {
    const tokens = tokenize(`a 'b c' "d $X" e\\ f;g&&h||i|j 2>/dev/null >&2 2>&1`);
    expect(tokens.map((t) => t.kind)).toEqual([
      'word',
      'word',
      'word',
      'word',
      'op',
      'word',
      'op',
      'word',
      'op',
      'word',
      'op',
      'word',
      'redirect',
      'word',
      'redirect',
      'word',
      'redirect',
      'word',
    ]);
    expect(tokens[2]).toEqual({
      kind: 'word',
      parts: [
        { type: 'text', value: 'd ', quoted: true },
        { type: 'param', name: 'X', quoted: true },
      ],
    });
    expect(tokens[12]).toEqual({ kind: 'redirect', op: '>', fd: 2 });
  });

  it('reports unterminated quotes as typed syntax errors', () => {
    expect(() => tokenize(`echo 'abc`)).toThrow(ShellSyntaxError);
    expect(() => tokenize(`echo "abc`)).toThrow('no closing quote');
    expect(() => tokenize('echo ${A')).toThrow(ShellSyntaxError);
  });

  it('never throws anything but ShellSyntaxError (property)', () => {
    const alphabet = fc.constantFrom(...`ab $?{}()'"\\;&|<>\n\t#=*0123\``.split(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 40 })), (source) => {
        try {
          parse(source);
        } catch (error) {
          if (!(error instanceof ShellSyntaxError)) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parser', () => {
  it('parses and-or lists, pipelines, assignments and redirects', () => {
    const script = parse('A=1 B="x y" cmd arg > out 2>&1 && ! other | wc; last');
    expect(script).toHaveLength(2);
    const first = script[0];
    expect(first?.rest[0]?.op).toBe('&&');
    expect(first?.rest[0]?.pipeline.negate).toBe(true);
    expect(first?.rest[0]?.pipeline.commands).toHaveLength(2);
    const simple = first?.first.commands[0];
    expect(simple?.kind).toBe('simple');
    if (simple?.kind !== 'simple') return;
    expect(simple.assignments.map((a) => a.name)).toEqual(['A', 'B']);
    expect(simple.words).toHaveLength(2);
    expect(simple.redirects.map((r) => [r.fd, r.op])).toEqual([
      [1, '>'],
      [2, '>&'],
    ]);
  });

  it('rejects misplaced operators like mksh', () => {
    expect(() => parse('; echo')).toThrow("syntax error: ';' unexpected");
    expect(() => parse('echo a &&')).toThrow('syntax error: unexpected EOF');
    expect(() => parse('echo >')).toThrow('syntax error: unexpected EOF');
    expect(() => parse('a | | b')).toThrow("syntax error: '|' unexpected");
  });
});

describe('interpreter', () => {
  it('runs sequences, && and || with $?', async () => {
    const android = sim();
    expect((await runCaptured(android, 'false; echo $?')).stdout).toBe('1\n');
    expect((await runCaptured(android, 'true && echo yes || echo no')).stdout).toBe('yes\n');
    expect((await runCaptured(android, 'false && echo yes || echo no')).stdout).toBe('no\n');
    expect((await runCaptured(android, 'false || false; echo $?')).stdout).toBe('1\n');
    expect((await runCaptured(android, '! false; echo $?')).stdout).toBe('0\n');
  });

  it('exit N ends the script with that status', async () => {
    const android = sim();
    const run = await runCaptured(android, 'echo a; exit 3; echo b');
    expect(run).toMatchObject({ status: 3, stdout: 'a\n' });
    expect((await runCaptured(android, 'false; exit')).status).toBe(1);
    expect((await runCaptured(android, 'exit 300')).status).toBe(44);
    expect((await runCaptured(android, '(exit 4); echo $?')).stdout).toBe('4\n');
  });

  it('expands variables, with VAR=value scoped to one command', async () => {
    const android = sim();
    const braces = ['X=5; echo $X ', '$', '{X}y "$X"'].join('');
    expect((await runCaptured(android, braces)).stdout).toBe('5 5y 5\n');
    expect((await runCaptured(android, 'X=1 sh -c \'echo $X\'; echo "[$X]"')).stdout).toBe('1\n[]\n');
    expect((await runCaptured(android, "Y=2; sh -c 'echo \"[$Y]\"'; export Y; sh -c 'echo $Y'")).stdout).toBe(
      '[]\n2\n',
    );
    expect((await runCaptured(android, 'V="a   b"; echo $V; echo "$V"')).stdout).toBe('a b\na   b\n');
    expect((await runCaptured(android, 'echo \'$HOME\' "$HOME" \\$HOME')).stdout).toBe('$HOME / $HOME\n');
    expect((await runCaptured(android, 'echo $(echo inner) `echo back`')).stdout).toBe('inner back\n');
  });

  it('keeps empty quoted arguments and drops empty unquoted expansions', async () => {
    const android = sim();
    expect((await runCaptured(android, 'echo \'\' x ""')).stdout).toBe(' x \n');
    expect((await runCaptured(android, 'echo $NOPE x $NOPE')).stdout).toBe('x\n');
    expect((await runCaptured(android, 'settings put secure k $EMPTY')).stderr).toBe('Bad arguments\n');
    // The empty quoted key reaches the command (an unset key: null), where no argument would be refused.
    expect((await runCaptured(android, "settings get secure ''")).stdout).toBe('null\n');
    expect((await runCaptured(android, 'settings get secure')).stderr).toBe('Bad arguments\n');
  });

  it('redirects stdout and stderr', async () => {
    const android = sim();
    const run = await runCaptured(
      android,
      'echo one > /data/local/tmp/f; echo two >> /data/local/tmp/f; cat /data/local/tmp/f',
    );
    expect(run.stdout).toBe('one\ntwo\n');
    expect(await runCaptured(android, 'cat /missing 2>/dev/null')).toMatchObject({
      status: 1,
      stdout: '',
      stderr: '',
    });
    expect(await runCaptured(android, 'cat /missing 2>&1')).toMatchObject({
      stdout: 'cat: /missing: No such file or directory\n',
      stderr: '',
    });
    expect(await runCaptured(android, 'echo err >&2')).toMatchObject({ stdout: '', stderr: 'err\n' });
    expect(await runCaptured(android, 'cat < /data/local/tmp/f')).toMatchObject({ stdout: 'one\ntwo\n' });
    expect(await runCaptured(android, 'echo x > /system/x')).toMatchObject({
      status: 1,
      stderr: "/system/bin/sh: can't create /system/x: Read-only file system\n",
    });
  });

  it('pipes output into the next command', async () => {
    const android = sim();
    expect((await runCaptured(android, 'getprop | grep ro.build.version.sdk')).stdout).toBe(
      '[ro.build.version.sdk]: [34]\n',
    );
    expect((await runCaptured(android, 'echo a:b:c | cut -d: -f2')).stdout).toBe('b\n');
  });

  it('prints syntax errors like mksh and exits 1', async () => {
    const android = sim();
    expect(await runCaptured(android, "echo 'abc")).toMatchObject({
      status: 1,
      stdout: '',
      stderr: '/system/bin/sh: no closing quote\n',
    });
    expect(await runCaptured(android, 'echo ok; ;')).toMatchObject({
      status: 1,
      stdout: '',
      stderr: "/system/bin/sh: syntax error: ';' unexpected\n",
    });
  });

  it('answers unknown commands with 127', async () => {
    const run = await runCaptured(sim(), 'frobnicate --now; echo $?');
    expect(run.stderr).toBe('/system/bin/sh: frobnicate: inaccessible or not found\n');
    expect(run.stdout).toBe('127\n');
    expect((await runCaptured(sim(), '/system/bin/getprop ro.build.version.release')).stdout).toBe('14\n');
  });

  it('globs unquoted patterns against the file system', async () => {
    const android = sim();
    await runCaptured(
      android,
      'echo > /data/local/tmp/a.apk; echo > /data/local/tmp/b.apk; echo > /data/local/tmp/c.txt',
    );
    expect((await runCaptured(android, 'echo /data/local/tmp/*.apk')).stdout).toBe(
      '/data/local/tmp/a.apk /data/local/tmp/b.apk\n',
    );
    expect((await runCaptured(android, "echo '/data/local/tmp/*.apk'")).stdout).toBe(
      '/data/local/tmp/*.apk\n',
    );
    expect((await runCaptured(android, 'rm /data/local/tmp/*.apk; ls /data/local/tmp')).stdout).toBe(
      'c.txt\n',
    );
  });

  it('runs argv without shell parsing', async () => {
    const run = await runCaptured(sim(), ['echo', '$HOME', 'a;b']);
    expect(run.stdout).toBe('$HOME a;b\n');
  });

  it('echo of any single-quoted string prints it back (property)', async () => {
    const android = sim();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 30 }).filter((s) => !/^-[neE]+$/.test(s)),
        async (s) => {
          const run = await runCaptured(android, `echo ${quoteArg(s)}`);
          expect(run).toMatchObject({ status: 0, stdout: `${s}\n`, stderr: '' });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('stdin reader', () => {
  it('reads exactly N bytes across chunks and leaves the rest', async () => {
    async function* chunks(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array([1, 2, 3]);
      yield new Uint8Array([4, 5, 6, 7]);
    }
    const reader = new StdinReader(chunks());
    expect([...(await reader.readExactly(5))]).toEqual([1, 2, 3, 4, 5]);
    expect([...(await reader.readAll())]).toEqual([6, 7]);
    expect(await reader.next()).toBeUndefined();
  });
});
