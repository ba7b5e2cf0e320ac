import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import {
  assertInstallArgs,
  INSTALL_FLAGS,
  parseInstallArgsString,
  validateInstallArgs,
} from '../../src/manifest/install-args.ts';

const PATH_RE = /^installArgs(?:\.(\d+))?$/;
const ALLOWED = new Set<string>(INSTALL_FLAGS);

/** Elements an attacker or a sloppy release script might try. */
const hostileElement = fc.oneof(
  fc.constantFrom(
    'install',
    '-r',
    '-t',
    '-d',
    '-g',
    '--user',
    '0',
    '-r ',
    ' -r',
    '-r\t',
    '-r\u200b',
    '\uff0dr',
    '\u2010r',
    '-R',
    '--r',
    '-rt',
    '-r\u0000',
    '',
    '/data/local/tmp/x.apk',
    'x.apk',
    '-r;reboot',
    '$(reboot)',
    '-t|sh',
    '--instant',
    '-i',
    'com.evil',
  ),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.anything({ maxDepth: 1 }),
);

describe('validateInstallArgs: examples', () => {
  it.each([[['install']], [['install', '-r', '-t']], [['install', '-g', '-d', '-t', '-r']]])(
    'accepts %j',
    (args) => {
      expect(validateInstallArgs(args)).toEqual([]);
    },
  );

  it.each<[unknown, string, string]>([
    ['install -r -t', 'installArgs', 'must be an array of strings (not a single string'],
    [null, 'installArgs', 'must be an array of strings'],
    [{ 0: 'install' }, 'installArgs', 'must be an array of strings'],
    [[], 'installArgs', 'must not be empty'],
    [['instal'], 'installArgs.0', 'must be exactly "install" (got "instal")'],
    [['-r', 'install'], 'installArgs.0', 'must be exactly "install"'],
    [['Install'], 'installArgs.0', 'must be exactly "install"'],
    [['install '], 'installArgs.0', 'must be exactly "install"'],
    [['install', '-r', '-t', '-r'], 'installArgs.3', '"-r" appears more than once'],
    [
      ['install', '--user'],
      'installArgs.1',
      '"--user" is not an allowed install flag (allowed: -r, -t, -d, -g)',
    ],
    [['install', 'install'], 'installArgs.1', 'is not an allowed install flag'],
    [['install', '-R'], 'installArgs.1', 'is not an allowed install flag'],
    [['install', '-rt'], 'installArgs.1', 'is not an allowed install flag'],
    [['install', '-r '], 'installArgs.1', 'must not contain whitespace or control characters'],
    [['install', ' -r'], 'installArgs.1', 'must not contain whitespace or control characters'],
    [['install', '-r\t'], 'installArgs.1', 'must not contain whitespace or control characters'],
    [['install', '-r\u00a0'], 'installArgs.1', 'must not contain whitespace or control characters'],
    [['install', '-r\u200b'], 'installArgs.1', 'must contain only ASCII characters'],
    [['install', '\uff0dr'], 'installArgs.1', 'must contain only ASCII characters'],
    [['install', '\u2212r'], 'installArgs.1', 'must contain only ASCII characters'],
    [['install', '-r\u0000'], 'installArgs.1', 'must not contain NUL'],
    [['install', ''], 'installArgs.1', 'must not be an empty string'],
    [['install', '/data/local/tmp/h.apk'], 'installArgs.1', 'must not be a path'],
    [['install', 'helper.apk'], 'installArgs.1', 'must not be a path'],
    [['install', 'C:\\h'], 'installArgs.1', 'must not be a path'],
    [['install', '-r;reboot'], 'installArgs.1', 'must not contain shell metacharacters'],
    [['install', '$(reboot)'], 'installArgs.1', 'must not contain shell metacharacters'],
    [['install', '`id`'], 'installArgs.1', 'must not contain shell metacharacters'],
    [['install', 7], 'installArgs.1', 'must be a string (got 7)'],
    [['install', null], 'installArgs.1', 'must be a string (got null)'],
  ])('rejects %j at %s', (args, path, message) => {
    const errors = validateInstallArgs(args);
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.find((e) => e.path === path)?.message).toContain(message);
  });

  it('reports every bad element, not only the first', () => {
    const errors = validateInstallArgs(['instal', '-r', '--user', '0', '-r', '/x.apk']);
    expect(errors.map((e) => e.path)).toEqual([
      'installArgs.0',
      'installArgs.2',
      'installArgs.3',
      'installArgs.4',
      'installArgs.5',
    ]);
  });

  it('names a hole in a sparse array by its index', () => {
    const args: unknown[] = ['install'];
    args[2] = '-r';
    expect(validateInstallArgs(args)).toEqual([
      { path: 'installArgs.1', message: 'must be a string (got undefined)' },
    ]);
  });

  it('escapes invisible characters in messages', () => {
    const [error] = validateInstallArgs(['install', '-r\u200b']);
    expect(error?.message).toContain('"-r\\u200b"');
    expect(error?.message).not.toContain('\u200b');
  });

  it('bounds the error list of a huge array and says so at the array path', () => {
    const errors = validateInstallArgs(['install', ...Array.from({ length: 10_000 }, () => '-r')]);
    expect(errors.length).toBeLessThanOrEqual(33);
    expect(errors.at(-1)).toMatchObject({
      path: 'installArgs',
      message: expect.stringContaining('10001 elements'),
    });
  });

  it('uses the given path prefix', () => {
    expect(validateInstallArgs(['x'], 'body.installArgs')).toEqual([
      { path: 'body.installArgs.0', message: 'must be exactly "install" (got "x")' },
    ]);
  });
});

describe('assertInstallArgs', () => {
  it('returns a copy of valid args', () => {
    const args = ['install', '-r', '-t'];
    const out = assertInstallArgs(args);
    expect(out).toEqual(args);
    expect(out).not.toBe(args);
  });

  it('throws INSTALL_ARGS_REJECTED with details.errors', () => {
    let caught: unknown;
    try {
      assertInstallArgs(['install', '-r', '-r']);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BridgeError);
    const err = caught as BridgeError;
    expect(err.code).toBe('INSTALL_ARGS_REJECTED');
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(false);
    expect(err.details).toEqual({
      errors: [{ path: 'installArgs.2', message: '"-r" appears more than once' }],
    });
    expect(err.message).toContain('installArgs.2: "-r" appears more than once');
  });
});

describe('parseInstallArgsString', () => {
  it.each([
    ['install -r -t', ['install', '-r', '-t']],
    ['  install   -g  ', ['install', '-g']],
    ['install', ['install']],
  ])('parses %j', (s, expected) => {
    expect(parseInstallArgsString(s)).toEqual(expected);
  });

  it.each([
    ['', 'installArgs'],
    ['   ', 'installArgs'],
    ['install\t-r', 'installArgs.0'],
    ['install -r\n', 'installArgs.1'],
    ['install -r\u3000-t', 'installArgs.1'],
    ['install -r -r', 'installArgs.2'],
    ['install --user 0', 'installArgs.1'],
    ['install -r /sdcard/x.apk', 'installArgs.2'],
  ])('rejects %j naming %s', (s, path) => {
    expect(() => parseInstallArgsString(s)).toThrowError(BridgeError);
    try {
      parseInstallArgsString(s);
    } catch (err) {
      const errors = (err as BridgeError).details?.['errors'] as { path: string }[];
      expect(errors.map((e) => e.path)).toContain(path);
    }
  });
});

describe('validateInstallArgs: properties', () => {
  it('an accepted list is "install" then distinct allowlisted flags, nothing else', () => {
    fc.assert(
      fc.property(fc.array(hostileElement, { maxLength: 7 }), fc.boolean(), (rest, leadWithInstall) => {
        const args = leadWithInstall ? ['install', ...rest] : rest;
        if (validateInstallArgs(args).length > 0) return;
        expect(args[0]).toBe('install');
        const flags = args.slice(1);
        for (const f of flags) expect(ALLOWED.has(f as string)).toBe(true);
        expect(new Set(flags).size).toBe(flags.length);
      }),
      { numRuns: 2000 },
    );
  });

  it('every rejection names the array or an existing index', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.array(hostileElement, { maxLength: 8 }), fc.anything({ maxDepth: 2 })),
        (args) => {
          for (const e of validateInstallArgs(args)) {
            const m = PATH_RE.exec(e.path);
            expect(m).not.toBeNull();
            if (m?.[1] !== undefined) {
              expect(Array.isArray(args)).toBe(true);
              expect(Number(m[1])).toBeLessThan((args as unknown[]).length);
            }
            expect(e.message.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('accepts any subset of the allowlist in any order after "install"', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray([...INSTALL_FLAGS]), (flags) => {
        const args = ['install', ...flags];
        expect(validateInstallArgs(args)).toEqual([]);
        expect(assertInstallArgs(args)).toEqual(args);
      }),
    );
  });

  it('inserting anything outside the allowlist (or a repeat) is rejected at that index', () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...INSTALL_FLAGS], { minLength: 1 }),
        fc.oneof(hostileElement, fc.constantFrom(...INSTALL_FLAGS)),
        fc.nat(),
        (flags, intruder, at) => {
          // An allowlisted flag the list lacks is a legal addition, not an intruder.
          fc.pre(
            !(
              typeof intruder === 'string' &&
              ALLOWED.has(intruder) &&
              !(flags as string[]).includes(intruder)
            ),
          );
          const args: unknown[] = ['install', ...flags];
          const index = 1 + (at % args.length);
          args.splice(index, 0, intruder);
          const errors = validateInstallArgs(args);
          expect(errors.length).toBeGreaterThan(0);
          if (typeof intruder === 'string' && ALLOWED.has(intruder)) {
            // A repeat is reported at its later occurrence.
            const first = args.indexOf(intruder);
            const second = args.indexOf(intruder, first + 1);
            expect(errors.map((e) => e.path)).toEqual([`installArgs.${second}`]);
          } else {
            expect(errors.map((e) => e.path)).toEqual([`installArgs.${index}`]);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('parseInstallArgsString splits valid lists joined by runs of spaces', () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...INSTALL_FLAGS]),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 6, maxLength: 6 }),
        (flags, gaps) => {
          const args = ['install', ...flags];
          const s = args.map((a, i) => ' '.repeat(gaps[i] ?? 1) + a).join('');
          expect(parseInstallArgsString(s)).toEqual(args);
        },
      ),
    );
  });
});
