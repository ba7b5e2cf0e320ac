/**
 * AdbClient above the connector interface: a scripted adb server on an in-memory duplex pair (no
 * sockets) checks the exact bytes the client sends and how it reads each reply. The real adb server
 * is exercised by the integration tests.
 */
import { type Duplex, duplexPair } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdbClient } from '../../src/adb/client.ts';
import type { AdbServerConnector } from '../../src/adb/connector.ts';
import { BridgeError } from '../../src/errors.ts';
import { encodeLengthPrefixed } from '../../src/protocol/adb/host-protocol.ts';

/** Each connection gets the next scripted reply after its first request arrives; requests are recorded. */
function scripted(replies: Array<string | Buffer>): { connector: AdbServerConnector; requests: string[] } {
  const requests: string[] = [];
  const connector: AdbServerConnector = {
    address: 'scripted',
    forwardHost: '127.0.0.1',
    async connect(): Promise<Duplex> {
      const [client, server] = duplexPair();
      const reply = replies.shift();
      let got = Buffer.alloc(0);
      server.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        // One complete request: 4 hex digits + that many bytes.
        while (got.length >= 4) {
          const n = Number.parseInt(got.subarray(0, 4).toString(), 16);
          if (got.length < 4 + n) return;
          requests.push(got.subarray(4, 4 + n).toString());
          got = got.subarray(4 + n);
          if (reply !== undefined) server.end(reply);
        }
      });
      return client;
    },
  };
  return { connector, requests };
}

describe('AdbClient over a connector', () => {
  it('connects an IPv6 endpoint with its brackets (host:connect:[addr]:port)', async () => {
    const { connector, requests } = scripted(['OKAY0017connected to [::1]:5555']);
    await expect(new AdbClient(connector).connect('[::1]:5555')).resolves.toBe('[::1]:5555');
    expect(requests).toEqual(['host:connect:[::1]:5555']);
  });

  it('a refused connect is DEVICE_OFFLINE naming the endpoint; an unauthorized one UNAUTHORIZED_DEVICE', async () => {
    const refused = scripted(['OKAY0037failed to connect to 127.0.0.1:5555: Connection refused']);
    await expect(new AdbClient(refused.connector).connect('127.0.0.1:5555')).rejects.toMatchObject({
      code: 'DEVICE_OFFLINE',
      message: expect.stringContaining('127.0.0.1:5555'),
    });
    const unauthorized = scripted(['OKAY0028failed to authenticate to 127.0.0.1:5555']);
    await expect(new AdbClient(unauthorized.connector).connect('127.0.0.1:5555')).rejects.toMatchObject({
      code: 'UNAUTHORIZED_DEVICE',
    });
  });

  it('refuses a malformed endpoint before connecting anywhere', async () => {
    const { connector, requests } = scripted([]);
    await expect(new AdbClient(connector).connect('127.1:5555')).rejects.toBeInstanceOf(BridgeError);
    expect(requests).toEqual([]);
  });

  it('lists devices from host:devices', async () => {
    const { connector, requests } = scripted(['OKAY002bemulator-5554\tdevice\n10.0.0.2:5555\toffline\n']);
    expect(await new AdbClient(connector).devices()).toEqual([
      { serial: 'emulator-5554', state: 'device' },
      { serial: '10.0.0.2:5555', state: 'offline' },
    ]);
    expect(requests).toEqual(['host:devices']);
  });

  it('maps FAIL on the transport to a typed error', async () => {
    const { connector, requests } = scripted(["FAIL0014device 'x' not found"]);
    await expect(new AdbClient(connector).shell('x', 'true')).rejects.toMatchObject({
      code: 'DEVICE_OFFLINE',
      retryable: true,
    });
    expect(requests).toEqual(['host:transport:x']);
  });

  it('reads the port adb bound for forward tcp:0', async () => {
    const { connector, requests } = scripted(['OKAYOKAY000540123']);
    expect(await new AdbClient(connector).forward('s1', 'tcp:0', 'localabstract:helper')).toBe('tcp:40123');
    expect(requests).toEqual(['host-serial:s1:forward:tcp:0;localabstract:helper']);
  });

  it('a FAIL after the transport OKAY of a forward is an error with adb’s message', async () => {
    const { connector } = scripted(['OKAYFAIL002ccannot bind listener: Address already in use']);
    await expect(new AdbClient(connector).forward('s1', 'tcp:5000', 'tcp:80')).rejects.toMatchObject({
      details: expect.objectContaining({ adbMessage: expect.stringContaining('cannot bind listener') }),
    });
  });

  it('a FAIL without a message instead of the transport OKAY of a forward is the device gone too (retryable)', async () => {
    const { connector } = scripted(['FAIL0000']);
    await expect(
      new AdbClient(connector).forward('s1', 'tcp:0', 'localabstract:helper'),
    ).rejects.toMatchObject({
      code: 'DEVICE_OFFLINE',
      retryable: true,
    });
  });

  it('a FAIL without a message after the transport OKAY of a forward is the device gone (retryable), not INTERNAL', async () => {
    // Seen when the device's transport went away while the adb server set the forward up.
    const { connector } = scripted(['OKAYFAIL0000']);
    await expect(
      new AdbClient(connector).forward('s1', 'tcp:0', 'localabstract:helper'),
    ).rejects.toMatchObject({
      code: 'DEVICE_OFFLINE',
      retryable: true,
    });
  });
});

describe('AdbClient.trackDevices', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports changes as they come, however long the server stays quiet, until stopped', async () => {
    vi.useFakeTimers();
    let server: Duplex | undefined;
    const requests: string[] = [];
    const connector: AdbServerConnector = {
      address: 'scripted',
      forwardHost: '127.0.0.1',
      async connect() {
        const [client, end] = duplexPair();
        server = end;
        end.on('data', (d: Buffer) => {
          requests.push(d.subarray(4).toString());
          end.write('OKAY');
          end.write(encodeLengthPrefixed('a\tdevice\n'));
        });
        return client;
      },
    };
    const tracker = await new AdbClient(connector).trackDevices();
    const changes: unknown[] = [];
    let ended = false;
    tracker.events.on('change', (c) => changes.push(c));
    tracker.events.on('error', () => undefined);
    tracker.events.on('end', () => {
      ended = true;
    });
    await vi.waitFor(() => expect(changes).toEqual([{ serial: 'a', state: 'device' }]));
    // Quiet for ten minutes: a tracker has no deadline of its own.
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(ended).toBe(false);
    server!.write(encodeLengthPrefixed('a\toffline\nb\tunauthorized\n'));
    server!.write(encodeLengthPrefixed(''));
    await vi.waitFor(() => expect(changes).toHaveLength(5));
    expect(changes.slice(1)).toEqual([
      { serial: 'a', state: 'offline' },
      { serial: 'b', state: 'unauthorized' },
      { serial: 'a', state: 'absent' },
      { serial: 'b', state: 'absent' },
    ]);
    expect(requests).toEqual(['host:track-devices']);
    tracker.stop();
    await vi.waitFor(() => expect(ended).toBe(true));
  });
});
