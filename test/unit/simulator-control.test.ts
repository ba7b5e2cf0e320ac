/** The simulator's run-time control API as a pure handler over fake devices (no sockets). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ControlledDevice, handleControl } from '../../src/simulator/control.ts';
import { mergeFaults } from '../../src/simulator/faults.ts';
import type { Faults } from '../../src/simulator/types.ts';

function fakeDevice(port: number): ControlledDevice & { calls: string[] } {
  const faults: Faults = {};
  const calls: string[] = [];
  let plugged = true;
  const d = {
    calls,
    address: `127.0.0.1:${port}`,
    serial: `127.0.0.1:${port}`,
    faults,
    offline: false,
    get plugged() {
      return plugged;
    },
    connectionCount: 1,
    setFaults(next: Faults) {
      for (const k of Object.keys(faults)) delete (faults as Record<string, unknown>)[k];
      Object.assign(faults, mergeFaults(next));
    },
    setFault(next: Faults) {
      d.setFaults(mergeFaults(faults, next));
    },
    clearFault(key?: keyof Faults) {
      if (key === undefined) d.setFaults({});
      else delete faults[key];
    },
    unplug() {
      plugged = false;
      calls.push('unplug');
    },
    plug() {
      plugged = true;
      calls.push('plug');
    },
    disconnectAll() {
      calls.push('disconnect');
    },
    listeners: () => ['tcp:27042'],
    runningHelpers: () => 1,
    processes: () => [{ pid: 4200, cmdline: 'app_process / dev.devicebridge.glassagent.Main' }],
  };
  return d;
}

describe('handleControl', () => {
  it('lists devices with their faults and counts', () => {
    const devices = [fakeDevice(5555), fakeDevice(5556)];
    devices[1]!.setFaults({ latencyMs: 5 });
    const res = handleControl(devices, 'GET', '/devices');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      devices: [
        expect.objectContaining({
          index: 0,
          faults: [],
          plugged: true,
          listeners: ['tcp:27042'],
          runningHelpers: 1,
          processes: ['4200 app_process / dev.devicebridge.glassagent.Main'],
        }),
        expect.objectContaining({ index: 1, address: '127.0.0.1:5556', faults: ['latency-ms=5'] }),
      ],
    });
  });

  it('replaces, adds and lifts faults with --fault specs', () => {
    const [d] = [fakeDevice(5555)];
    expect(
      handleControl([d], 'PUT', '/devices/0/faults', '{"faults":["latency-ms=50","stall"]}').status,
    ).toBe(200);
    expect(d.faults).toEqual({ latencyMs: 50, stall: true });
    handleControl([d], 'PATCH', '/devices/0/faults', '{"faults":["chunk=drop:1"]}');
    expect(d.faults).toEqual({ latencyMs: 50, stall: true, chunk: { action: 'drop', index: 1 } });
    expect(handleControl([d], 'DELETE', '/devices/0/faults/stall').body).toMatchObject({
      faults: ['latency-ms=50', 'chunk=drop:1'],
    });
    handleControl([d], 'DELETE', '/devices/0/faults');
    expect(d.faults).toEqual({});
  });

  it('pulls and re-plugs the cable', () => {
    const d = fakeDevice(5555);
    expect(handleControl([d], 'POST', '/devices/0/unplug').body).toMatchObject({ plugged: false });
    expect(handleControl([d], 'POST', '/devices/0/plug').body).toMatchObject({ plugged: true });
    handleControl([d], 'POST', '/devices/0/disconnect');
    expect(d.calls).toEqual(['unplug', 'plug', 'disconnect']);
  });

  it('400s on bad specs and bodies, 404s on unknown devices and faults, 405s on wrong methods', () => {
    const d = fakeDevice(5555);
    const bad = handleControl([d], 'PUT', '/devices/0/faults', '{"faults":["latency-ms=x"]}');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('latency-ms=x');
    expect(handleControl([d], 'PUT', '/devices/0/faults', '{"faults":"stall"}').status).toBe(400);
    expect(handleControl([d], 'PUT', '/devices/0/faults', '{"faults":[],"faults":[]}').status).toBe(400);
    expect(handleControl([d], 'PUT', '/devices/0/faults', '{"__proto__":{}}').status).toBe(400);
    expect(handleControl([d], 'GET', '/devices/1').status).toBe(404);
    expect(handleControl([d], 'DELETE', '/devices/0/faults/toString').status).toBe(404);
    expect(handleControl([d], 'GET', '/devices/0/unplug').status).toBe(405);
    expect(handleControl([d], 'POST', '/devices').status).toBe(405);
    expect(d.faults).toEqual({});
  });

  it('answers any request with a JSON status and never throws (property)', () => {
    const segment = fc.oneof(
      fc.constantFrom('devices', '0', '1', 'faults', 'plug', 'unplug', 'disconnect', 'stall', '__proto__'),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'POST', 'HEAD'),
        fc.array(segment, { maxLength: 6 }).map((p) => `/${p.join('/')}`),
        fc.oneof(fc.string(), fc.json(), fc.constant('{"faults":["latency-ms=1"]}')),
        (method, path, body) => {
          const res = handleControl([fakeDevice(5555)], method, path, body);
          expect([200, 400, 404, 405]).toContain(res.status);
          expect(JSON.parse(JSON.stringify(res.body))).toEqual(res.body);
        },
      ),
    );
  });
});
