import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceLocks } from '../../src/adb/device-lock.ts';
import { mapAdbError } from '../../src/adb/errors.ts';
import { ForwardLedger, type ForwardOps } from '../../src/adb/forward-ledger.ts';
import { quoteShellArg, shellCommand } from '../../src/adb/shell-quote.ts';
import { BridgeError } from '../../src/errors.ts';
import { encodeShellPacket, ShellPacketDecoder } from '../../src/protocol/adb/shell-protocol.ts';
import { parsePmInstallOutput } from '../../src/protocol/helper/package-manager.ts';

describe('quoteShellArg', () => {
  it('leaves safe words alone and single-quotes the rest', () => {
    expect(quoteShellArg('com.example/.Runner')).toBe('com.example/.Runner');
    expect(quoteShellArg('')).toBe("''");
    expect(quoteShellArg("it's; rm -rf /")).toBe("'it'\\''s; rm -rf /'");
    expect(shellCommand('pm', 'install', '-r', '/data/local/tmp/a b.apk')).toBe(
      "pm install -r '/data/local/tmp/a b.apk'",
    );
  });

  it('refuses NUL and line breaks, and non-literal command names', () => {
    expect(() => quoteShellArg('a\nb')).toThrow(BridgeError);
    expect(() => quoteShellArg('a\0b')).toThrow(/NUL or a line break/);
    expect(() => shellCommand('pm; reboot')).toThrow(/not a command name/);
  });

  it('property: a real POSIX shell gets back exactly the argument', () => {
    const arg = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !/[\0\r\n]/.test(s));
    const samples = fc.sample(arg, 60);
    // One sh process for all samples: printf each quoted argument followed by NUL (which no
    // accepted argument can contain).
    const script = samples.map((s) => `printf '%s\\000' ${quoteShellArg(s)}`).join('; ');
    const out = execFileSync('/bin/sh', ['-c', script]).toString('utf8');
    expect(out.split('\u0000').slice(0, -1)).toEqual(
      samples.map((s) => Buffer.from(s, 'utf8').toString('utf8')),
    );
  });
});

describe('parsePmInstallOutput', () => {
  it('parses Success and Failure [CODE: message]', () => {
    expect(parsePmInstallOutput('Performing Streamed Install\nSuccess\n')).toEqual({ ok: true });
    expect(
      parsePmInstallOutput(
        'Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package com.x signatures do not match newer version; ignoring!]\n',
      ),
    ).toEqual({
      ok: false,
      code: 'INSTALL_FAILED_UPDATE_INCOMPATIBLE',
      message: 'Existing package com.x signatures do not match newer version; ignoring!',
    });
    expect(parsePmInstallOutput('Failure [INSTALL_FAILED_TEST_ONLY]')).toMatchObject({
      ok: false,
      code: 'INSTALL_FAILED_TEST_ONLY',
    });
    expect(parsePmInstallOutput('Error: java.lang.IllegalArgumentException')).toMatchObject({
      ok: false,
      code: 'INSTALL_FAILED_INTERNAL_ERROR',
    });
    expect(parsePmInstallOutput('weird')).toMatchObject({ ok: false, code: 'INSTALL_FAILED_UNKNOWN_OUTPUT' });
  });

  it('property: never throws, and "ok" only with a Success line', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const r = parsePmInstallOutput(s);
        if (r.ok) expect(s).toMatch(/^Success\s*$/m);
        else expect(r.code).toMatch(/^[A-Z][A-Z0-9_]*$/);
      }),
    );
  });

  it('maps adb messages to typed errors', () => {
    expect(mapAdbError(new Error("device 'x' not found"), { operation: 'shell' }).code).toBe(
      'DEVICE_OFFLINE',
    );
    expect(mapAdbError(new Error('device offline'), { operation: 'shell' }).retryable).toBe(true);
    expect(mapAdbError(new Error('device unauthorized.'), { operation: 'shell' }).code).toBe(
      'UNAUTHORIZED_DEVICE',
    );
    expect(mapAdbError(new Error('connect ECONNREFUSED 127.0.0.1:5137'), { operation: 'x' }).code).toBe(
      'UNAVAILABLE',
    );
    // What adb answers while the device's key prompt is pending (seen in the soak as INTERNAL).
    const authorizing = mapAdbError(new Error("Failure: 'device still authorizing'"), { operation: 'shell' });
    expect(authorizing.code).toBe('UNAUTHORIZED_DEVICE');
    expect(authorizing.retryable).toBe(true);
  });
});

describe('ShellPacketDecoder', () => {
  it('property: any split of the byte stream decodes the same packets', () => {
    const packet = fc.record({ id: fc.integer({ min: 0, max: 5 }), data: fc.uint8Array({ maxLength: 300 }) });
    fc.assert(
      fc.property(
        fc.array(packet, { maxLength: 12 }),
        fc.array(fc.nat(400), { maxLength: 20 }),
        (packets, cuts) => {
          const stream = Buffer.concat(packets.map((p) => encodeShellPacket(p.id, p.data)));
          const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
          const decoder = new ShellPacketDecoder();
          const out: Array<{ id: number; data: number[] }> = [];
          let prev = 0;
          for (const p of [...points, stream.length]) {
            for (const pk of decoder.push(stream.subarray(prev, p)))
              out.push({ id: pk.id, data: [...pk.data] });
            prev = p;
          }
          expect(out).toEqual(packets.map((p) => ({ id: p.id, data: [...p.data] })));
          expect(decoder.buffered).toBe(0);
        },
      ),
    );
  });

  it('refuses oversized packets', () => {
    const d = new ShellPacketDecoder(10);
    expect(() => d.push(encodeShellPacket(1, Buffer.alloc(11)))).toThrow(/exceeds/);
  });
});

describe('DeviceLocks', () => {
  it('serialises writers per device and lets readers overlap', async () => {
    const locks = new DeviceLocks();
    const log: string[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const write = (name: string) =>
      locks.withWrite('d1', async () => {
        log.push(`${name}+`);
        await sleep(10);
        log.push(`${name}-`);
      });
    let concurrentReads = 0;
    let maxReads = 0;
    const read = () =>
      locks.withRead('d1', async () => {
        concurrentReads += 1;
        maxReads = Math.max(maxReads, concurrentReads);
        await sleep(10);
        concurrentReads -= 1;
      });
    await Promise.all([
      write('a'),
      write('b'),
      read(),
      read(),
      read(),
      locks.withWrite('d2', async () => log.push('other')),
    ]);
    // Writers on d1 never interleave.
    const d1 = log.filter((l) => l !== 'other');
    expect(d1).toEqual(['a+', 'a-', 'b+', 'b-']);
    expect(maxReads).toBe(3);
  });
});

describe('ForwardLedger', () => {
  function fakeAdb(): ForwardOps & { server: Map<string, string> } {
    const server = new Map<string, string>();
    let next = 40000;
    return {
      server,
      async forward(serial, local, remote) {
        const bound = local === 'tcp:0' ? `tcp:${next++}` : local;
        server.set(`${serial} ${bound}`, remote);
        return bound;
      },
      async removeForward(serial, local) {
        if (!server.delete(`${serial} ${local}`)) throw new Error('listener not found');
      },
      async listForwards() {
        return [...server].map(([k, remote]) => {
          const [serial = '', local = ''] = k.split(' ');
          return { serial, local, remote };
        });
      },
    };
  }

  it('releases exactly what an owner created', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const a = await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    await ledger.open('lease-1', 's1', 'tcp:0', 'localabstract:glass-agent');
    await ledger.open('lease-2', 's2', 'tcp:0', 'tcp:9000');
    expect(a.local).toMatch(/^tcp:\d+$/);
    const report = await ledger.release('lease-1');
    expect(report.removed).toHaveLength(2);
    expect(report.failed).toEqual([]);
    expect([...adb.server.keys()]).toEqual(['s2 tcp:40002']);
    expect(ledger.entries('lease-2')).toHaveLength(1);
  });

  it('reconcile removes strays on an owned server and forgets entries the server lost', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    adb.server.set('s1 tcp:50000', 'tcp:1');
    const lost = await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9001');
    adb.server.delete(`s1 ${lost.local}`);
    const result = await ledger.reconcile();
    expect(result.removedStrays).toEqual(['s1 tcp:50000 tcp:1']);
    expect(result.forgotten.map((e) => e.local)).toEqual([lost.local]);
    expect(adb.server.size).toBe(1);
  });

  it('on an external server leaves forwards it did not create', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: false });
    adb.server.set('s1 tcp:50000', 'tcp:1');
    expect((await ledger.reconcile()).removedStrays).toEqual([]);
    expect(adb.server.size).toBe(1);
  });
});
