/** ForwardLedger over a fake of its own ForwardOps interface (pure): removals and reconcile. */
import { describe, expect, it } from 'vitest';
import { ForwardLedger, type ForwardOps } from '../../src/adb/forward-ledger.ts';

/** A server whose killforward answers FAIL with an empty message when the forward is gone (as adb does for an offline device). */
function fakeAdb(): ForwardOps & { server: Map<string, string>; listFails: boolean; killFails: boolean } {
  const server = new Map<string, string>();
  let next = 40000;
  const fake = {
    server,
    listFails: false,
    killFails: false,
    async forward(serial: string, local: string, remote: string) {
      const bound = local === 'tcp:0' ? `tcp:${next++}` : local;
      server.set(`${serial} ${bound}`, remote);
      return bound;
    },
    async removeForward(serial: string, local: string) {
      if (fake.killFails || !server.delete(`${serial} ${local}`)) throw new Error('');
    },
    async listForwards() {
      if (fake.listFails) throw new Error('adb server unreachable');
      return [...server].map(([k, remote]) => {
        const [serial = '', local = ''] = k.split(' ');
        return { serial, local, remote };
      });
    },
  };
  return fake;
}

describe('ForwardLedger removals', () => {
  it('a forward the server no longer lists is removed, even when killforward answers an empty FAIL', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const gone = await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9001');
    adb.server.delete(`s1 ${gone.local}`); // the device went offline: adb dropped it
    const report = await ledger.release('lease-1');
    expect(report.failed).toEqual([]);
    expect(report.removed).toHaveLength(2);
    expect(adb.server.size).toBe(0);
    expect(ledger.entries()).toEqual([]);
  });

  it('a forward still listed that cannot be removed is a failure and stays in the ledger', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    adb.killFails = true;
    const report = await ledger.release('lease-1');
    expect(report.removed).toEqual([]);
    expect(report.failed).toHaveLength(1);
    expect(ledger.entries('lease-1')).toHaveLength(1);
  });

  it('when the server cannot even list its forwards, the failure stands', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const entry = await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    adb.server.delete(`s1 ${entry.local}`);
    adb.listFails = true;
    const report = await ledger.release('lease-1');
    expect(report.failed.map((f) => f.local)).toEqual([entry.local]);
    // close() of a forward adb dropped succeeds once the list answers again.
    adb.listFails = false;
    await expect(ledger.close('s1', entry.local)).resolves.toBeUndefined();
    expect(ledger.entries()).toEqual([]);
  });
});

describe('ForwardLedger reconcile and opens in flight', () => {
  it('a forward being opened while reconcile runs is never taken for a stray', async () => {
    const adb = fakeAdb();
    const create = adb.forward.bind(adb);
    let proceed!: () => void;
    const gate = new Promise<void>((r) => (proceed = r));
    // The forward exists on the server before the ledger hears its port back.
    adb.forward = async (serial, local, remote) => {
      const bound = await create(serial, local, remote);
      await gate;
      return bound;
    };
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const opening = ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    await new Promise((r) => setImmediate(r));
    const reconciling = ledger.reconcile();
    proceed();
    const entry = await opening;
    const result = await reconciling;
    expect(result.removedStrays).toEqual([]);
    expect(adb.server.has(`s1 ${entry.local}`)).toBe(true);
    expect(ledger.entries('lease-1')).toEqual([entry]);
  });

  it('an open asked for while reconcile runs waits for it', async () => {
    const adb = fakeAdb();
    adb.server.set('s1 tcp:50000', 'tcp:1'); // a stray
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const reconciling = ledger.reconcile();
    const opening = ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    const [result, entry] = await Promise.all([reconciling, opening]);
    expect(result.removedStrays).toEqual(['s1 tcp:50000 tcp:1']);
    expect([...adb.server.keys()]).toEqual([`s1 ${entry.local}`]);
  });
});

describe('ForwardLedger verify', () => {
  it('a forward the server still has is kept', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const entry = await ledger.open('lease-1', 's1', 'tcp:0', 'localabstract:glass-agent');
    expect(await ledger.verify(entry)).toBe(true);
    expect(ledger.entries('lease-1')).toEqual([entry]);
  });

  it('a forward the server lost (its device reconnected) is forgotten, so a new one replaces it', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const entry = await ledger.open('lease-1', 's1', 'tcp:0', 'localabstract:glass-agent');
    const other = await ledger.open('lease-1', 's1', 'tcp:0', 'tcp:9000');
    adb.server.clear();
    expect(await ledger.verify(entry)).toBe(false);
    expect(ledger.entries('lease-1')).toEqual([other]);
    const renewed = await ledger.open('lease-1', 's1', 'tcp:0', 'localabstract:glass-agent');
    expect(ledger.entries('lease-1')).toEqual([other, renewed]);
  });

  it('the same local now forwarding elsewhere is not the entry: it is forgotten, the other left alone', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const entry = await ledger.open('lease-1', 's1', 'tcp:0', 'localabstract:glass-agent');
    adb.server.set(`s1 ${entry.local}`, 'tcp:7000');
    expect(await ledger.verify(entry)).toBe(false);
    expect(ledger.entries()).toEqual([]);
    expect(adb.server.get(`s1 ${entry.local}`)).toBe('tcp:7000');
  });

  it('a server that cannot list its forwards is an error, and the entry stays', async () => {
    const adb = fakeAdb();
    const ledger = new ForwardLedger(adb, { ownsServer: true });
    const entry = await ledger.open('lease-1', 's1', 'tcp:0', 'localabstract:glass-agent');
    adb.listFails = true;
    await expect(ledger.verify(entry)).rejects.toThrow('adb server unreachable');
    expect(ledger.entries('lease-1')).toEqual([entry]);
  });
});
