/** The farm routes' pure parts: the shell command line, the shell request schema, token capabilities, the app journal record. */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShellBodySchema } from '../../src/api/farm.ts';
import { Authenticator, CAPABILITIES, hasCapability, hashToken } from '../../src/auth/tokens.ts';
import { BridgeError } from '../../src/errors.ts';
import { parseAppJournalRecord } from '../../src/helpers/farm/apps.ts';
import { shellLine } from '../../src/helpers/farm/shell.ts';

describe('shellLine', () => {
  it('property: a real POSIX shell runs argv[0] with exactly argv[1..] as its arguments', () => {
    const arg = fc.string({ unit: 'binary', maxLength: 30 }).filter((s) => !/[\0\r\n\u0001]/.test(s));
    const argvs = fc.sample(fc.array(arg, { minLength: 1, maxLength: 5 }), 40);
    // One sh process: each line is `printf FORMAT args…` whose output ends with a record separator.
    const script = argvs
      .map((a) => `${shellLine({ argv: ['printf', '%s\\000', ...a] })}; printf '\\001'`)
      .join('\n');
    const out = execFileSync('/bin/sh', ['-c', script]).toString('utf8');
    const records = out.split('\u0001').slice(0, -1);
    expect(records).toEqual(
      argvs.map((a) => a.map((s) => `${Buffer.from(s, 'utf8').toString('utf8')}\u0000`).join('')),
    );
  });

  it('refuses an empty argv, NUL or line breaks in argv, NUL or blank command lines, with typed errors', () => {
    for (const input of [{ argv: [] }, { argv: ['echo', 'a\nb'] }, { command: 'a\0b' }, { command: '  ' }]) {
      expect(() => shellLine(input), JSON.stringify(input)).toThrow(BridgeError);
    }
    expect(shellLine({ command: 'echo a | wc -c' })).toBe('echo a | wc -c');
    expect(shellLine({ argv: ['echo', 'a b'] })).toBe("echo 'a b'");
  });
});

describe('ShellBodySchema', () => {
  it('property: valid exactly when one of argv and command is given', () => {
    fc.assert(
      fc.property(
        fc.option(fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 4 }), { nil: undefined }),
        fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }),
        (argv, command) => {
          const body = { ...(argv ? { argv } : {}), ...(command ? { command } : {}) };
          expect(ShellBodySchema.safeParse(body).success).toBe(
            (argv === undefined) !== (command === undefined),
          );
        },
      ),
    );
    expect(ShellBodySchema.safeParse({ argv: ['true'], extra: 1 }).success).toBe(false);
    expect(ShellBodySchema.safeParse({ argv: ['true'], timeoutMs: 0 }).success).toBe(false);
  });
});

describe('token capabilities', () => {
  const entry = { name: 'ci', tenant: 'acme', role: 'client', sha256: hashToken('t1') };

  it('a tokens file grants capabilities per token; none by default; admins hold all', () => {
    const auth = Authenticator.fromJson(
      JSON.stringify([
        { ...entry, capabilities: ['shell'] },
        { ...entry, name: 'plain', sha256: hashToken('t2') },
        { ...entry, name: 'ops', role: 'admin', sha256: hashToken('t3') },
      ]),
    );
    const shellClient = auth.authenticate('Bearer t1', undefined)!;
    const plain = auth.authenticate('Bearer t2', undefined)!;
    const admin = auth.authenticate('Bearer t3', undefined)!;
    expect(shellClient.capabilities).toEqual(['shell']);
    expect(hasCapability(shellClient, 'shell')).toBe(true);
    expect(hasCapability(plain, 'shell')).toBe(false);
    expect(hasCapability(admin, 'shell')).toBe(true);
  });

  it('adb is a capability of its own: shell does not imply it, nor adb shell; admins hold both', () => {
    const auth = Authenticator.fromJson(
      JSON.stringify([
        { ...entry, capabilities: ['adb'] },
        { ...entry, name: 'shell-only', sha256: hashToken('t2'), capabilities: ['shell'] },
        { ...entry, name: 'ops', role: 'admin', sha256: hashToken('t3') },
      ]),
    );
    const adbClient = auth.authenticate('Bearer t1', undefined)!;
    const shellClient = auth.authenticate('Bearer t2', undefined)!;
    const admin = auth.authenticate('Bearer t3', undefined)!;
    expect(adbClient.capabilities).toEqual(['adb']);
    expect(hasCapability(adbClient, 'adb')).toBe(true);
    expect(hasCapability(adbClient, 'shell')).toBe(false);
    expect(hasCapability(shellClient, 'adb')).toBe(false);
    expect(hasCapability(admin, 'adb')).toBe(true);
    expect(CAPABILITIES).toEqual(['shell', 'adb']);
  });

  it('an unknown capability is refused naming the entry and field', () => {
    expect(() => Authenticator.fromJson(JSON.stringify([{ ...entry, capabilities: ['root'] }]))).toThrow(
      /\[0\]\.capabilities/,
    );
  });
});

describe('parseAppJournalRecord', () => {
  it('property: any stored value parses to a valid record or null, never throws', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const r = parseAppJournalRecord(value);
        if (r !== null) expect(typeof r.serial).toBe('string');
      }),
    );
    fc.assert(
      fc.property(
        fc.record({ serial: fc.string(), packageName: fc.string(), sha256: fc.string() }),
        (value) => {
          const r = parseAppJournalRecord(value);
          // Only a dotted Java name gets through (nothing a shell would read as syntax).
          if (r !== null)
            expect(r.packageName).toMatch(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/);
        },
      ),
    );
  });

  it('reads back what teardown journals; a package name that would reach the shell unchecked is refused', () => {
    const record = { serial: '127.0.0.1:5555', packageName: 'com.example.app', sha256: 'a'.repeat(64) };
    // A record written before `keep` was journaled reads as not kept (uninstalled at teardown).
    expect(parseAppJournalRecord(record)).toEqual({ ...record, keep: false });
    expect(parseAppJournalRecord({ ...record, keep: true })).toEqual({ ...record, keep: true });
    expect(parseAppJournalRecord({ ...record, keep: 'yes' })).toBeNull();
    expect(parseAppJournalRecord({ ...record, packageName: 'com.x; reboot' })).toBeNull();
    expect(parseAppJournalRecord({ ...record, serial: 5 })).toBeNull();
  });
});
