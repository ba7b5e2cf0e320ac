/**
 * The adb endpoint's handshake and flow control byte by byte, with a raw TCP client speaking the
 * transport protocol (the shared codec) and the test-only key of test/fixtures/adbkey: only the
 * registered key's signature brings the connection online, AUTH RSAPUBLICKEY never does, a wrong
 * signature gets a new token, and a client that does not OKAY gets one WRTE and no more.
 */
import net from 'node:net';
import { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAdbPublicKey } from '../../src/adb/adb-public-key.ts';
import { AdbRelayEndpoint, MAX_UNACKED_TO_DEVICE } from '../../src/adb/relay-endpoint.ts';
import {
  A_AUTH,
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_VERSION,
  A_WRTE,
  type AdbMessage,
  AUTH_RSAPUBLICKEY,
  AUTH_SIGNATURE,
  AUTH_TOKEN,
  encodeMessage,
  MessageDecoder,
} from '../../src/adb/transport-message.ts';
import { adbSign, fixturePrivateKey, fixturePublicKey, otherPrivateKey } from '../support/adb-keys.ts';

/** A raw transport client: send messages, await the next one (bounded). */
class RawClient {
  readonly socket: net.Socket;
  readonly #decoder = new MessageDecoder();
  readonly #queue: AdbMessage[] = [];
  #wake: (() => void) | undefined;
  closed = false;

  constructor(port: number) {
    this.socket = net.connect({ host: '127.0.0.1', port });
    this.socket.on('data', (chunk: Buffer) => {
      this.#queue.push(...this.#decoder.push(chunk));
      this.#wake?.();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.#wake?.();
    });
    this.socket.on('error', () => undefined);
  }

  send(command: number, arg0: number, arg1: number, data: Uint8Array = Buffer.alloc(0)): void {
    this.socket.write(encodeMessage({ command, arg0, arg1, data }));
  }

  /** The next message, or undefined when none arrives within `ms`. */
  async next(ms = 2000): Promise<AdbMessage | undefined> {
    const deadline = Date.now() + ms;
    while (this.#queue.length === 0 && !this.closed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deadline - Date.now());
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    return this.#queue.shift();
  }
}

let endpoint: AdbRelayEndpoint | undefined;
const opened: string[] = [];
let device: Duplex | undefined;
/** What the client wrote to the "device". */
const received: Buffer[] = [];
/** The "device" stops accepting bytes (its writes never complete). */
let deviceStalled = false;
/** When set, opening on the "device" waits for it. */
let openGate: Promise<void> | undefined;

async function start(): Promise<AdbRelayEndpoint> {
  endpoint = await AdbRelayEndpoint.listen({
    key: parseAdbPublicKey(fixturePublicKey),
    banner: 'device::ro.product.name=test;features=shell_v2',
    // The "device": one in-memory stream per open, standing in for the adb server's socket.
    open: async (service) => {
      opened.push(service);
      await openGate;
      device = new Duplex({
        read() {},
        write(chunk: Buffer, _encoding, callback) {
          received.push(chunk);
          if (!deviceStalled) callback();
        },
      });
      return device;
    },
    bindHost: '127.0.0.1',
    ports: { from: 0, to: 0 },
  });
  return endpoint;
}

afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
  opened.length = 0;
  received.length = 0;
  deviceStalled = false;
  openGate = undefined;
  device = undefined;
});

async function handshake(client: RawClient): Promise<Buffer> {
  client.send(A_CNXN, A_VERSION, 1024 * 1024, Buffer.from('host::features=shell_v2\0'));
  const auth = await client.next();
  expect(auth).toMatchObject({ command: A_AUTH, arg0: AUTH_TOKEN });
  expect(auth!.data.length).toBe(20);
  return Buffer.from(auth!.data);
}

describe('adb endpoint handshake', () => {
  it('CNXN is answered with AUTH TOKEN; the registered key signs its way online', async () => {
    const e = await start();
    const client = new RawClient(e.port);
    const token = await handshake(client);
    client.send(A_AUTH, AUTH_SIGNATURE, 0, adbSign(fixturePrivateKey, token));
    const cnxn = await client.next();
    expect(cnxn?.command).toBe(A_CNXN);
    expect(Buffer.from(cnxn!.data).toString()).toBe('device::ro.product.name=test;features=shell_v2');
    client.socket.destroy();
  });

  it('a wrong signature gets a fresh token; AUTH RSAPUBLICKEY is not a way in; OPEN before auth is ignored', async () => {
    const e = await start();
    const client = new RawClient(e.port);
    const token = await handshake(client);
    client.send(A_AUTH, AUTH_SIGNATURE, 0, adbSign(otherPrivateKey, token));
    const again = await client.next();
    expect(again).toMatchObject({ command: A_AUTH, arg0: AUTH_TOKEN });
    expect(Buffer.from(again!.data).equals(token)).toBe(false);
    // The old token's valid signature no longer counts either.
    client.send(A_AUTH, AUTH_SIGNATURE, 0, adbSign(fixturePrivateKey, token));
    expect((await client.next())?.arg0).toBe(AUTH_TOKEN);
    client.send(A_AUTH, AUTH_RSAPUBLICKEY, 0, Buffer.from(`${fixturePublicKey.trim()}\0`));
    client.send(A_OPEN, 1, 0, Buffer.from('shell:echo hi\0'));
    expect(await client.next(500)).toBeUndefined();
    expect(opened).toEqual([]);
    client.socket.destroy();
  });

  it('a client that keeps failing is dropped', async () => {
    const e = await start();
    const client = new RawClient(e.port);
    let token = await handshake(client);
    for (let i = 0; i < 12 && !client.closed; i++) {
      client.send(A_AUTH, AUTH_SIGNATURE, 0, adbSign(otherPrivateKey, token));
      const m = await client.next();
      if (m === undefined) break;
      token = Buffer.from(m.data);
    }
    expect(client.closed).toBe(true);
  });
});

describe('adb endpoint streams', () => {
  async function online(): Promise<RawClient> {
    const e = await start();
    const client = new RawClient(e.port);
    const token = await handshake(client);
    client.send(A_AUTH, AUTH_SIGNATURE, 0, adbSign(fixturePrivateKey, token));
    expect((await client.next())?.command).toBe(A_CNXN);
    return client;
  }

  it('refused services are answered CLSE without reaching the device', async () => {
    const client = await online();
    client.send(A_OPEN, 7, 0, Buffer.from('reverse:forward:tcp:1;tcp:2\0'));
    expect(await client.next()).toMatchObject({ command: A_CLSE, arg0: 0, arg1: 7 });
    client.send(A_OPEN, 8, 0, Buffer.from('tcpip:5555\0'));
    expect(await client.next()).toMatchObject({ command: A_CLSE, arg0: 0, arg1: 8 });
    expect(opened).toEqual([]);
    client.socket.destroy();
  });

  it('relays both ways; one WRTE in flight until the client says OKAY', async () => {
    const client = await online();
    client.send(A_OPEN, 5, 0, Buffer.from('shell:cat\0'));
    const okay = await client.next();
    expect(okay).toMatchObject({ command: A_OKAY, arg1: 5 });
    expect(opened).toEqual(['shell:cat']);
    const localId = okay!.arg0;

    // Client → device: OKAY once written.
    client.send(A_WRTE, 5, localId, Buffer.from('to device'));
    expect(await client.next()).toMatchObject({ command: A_OKAY, arg0: localId, arg1: 5 });
    expect(Buffer.concat(received).toString()).toBe('to device');

    // Device → client: two chunks; the second waits for the client's OKAY.
    device!.push(Buffer.from('one'));
    const first = await client.next();
    expect(first).toMatchObject({ command: A_WRTE, arg0: localId, arg1: 5 });
    device!.push(Buffer.from('two'));
    expect(await client.next(300)).toBeUndefined();
    client.send(A_OKAY, 5, localId);
    const second = await client.next();
    expect(Buffer.from(second!.data).toString()).toBe('two');

    // The device ends the stream: CLSE after the data.
    client.send(A_OKAY, 5, localId);
    device!.push(null);
    expect(await client.next()).toMatchObject({ command: A_CLSE, arg0: localId, arg1: 5 });
    client.socket.destroy();
  });

  it('a client that writes without waiting for OKAY to a stalled device gets its stream closed', async () => {
    const client = await online();
    deviceStalled = true;
    client.send(A_OPEN, 11, 0, Buffer.from('shell:cat\0'));
    const okay = await client.next();
    expect(okay?.command).toBe(A_OKAY);
    const chunk = Buffer.alloc(1024 * 1024, 1);
    for (let i = 0; i < 6; i++) client.send(A_WRTE, 11, okay!.arg0, chunk);
    expect(await client.next()).toMatchObject({ command: A_CLSE, arg0: okay!.arg0, arg1: 11 });
    expect(Buffer.concat(received).length).toBeLessThanOrEqual(MAX_UNACKED_TO_DEVICE);
    expect(endpoint!.openStreams).toBe(0);
    client.socket.destroy();
  });

  it('a stream the client closes while the device side is still opening is never answered OKAY', async () => {
    const client = await online();
    let letOpen: () => void = () => undefined;
    openGate = new Promise<void>((resolve) => {
      letOpen = resolve;
    });
    client.send(A_OPEN, 12, 0, Buffer.from('shell:sleep 1\0'));
    for (let i = 0; i < 50 && opened.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    // The client gives up before our OKAY: it knows only its own id.
    client.send(A_CLSE, 12, 0);
    await new Promise((r) => setTimeout(r, 50));
    letOpen();
    expect(await client.next(300)).toBeUndefined();
    expect(endpoint!.openStreams).toBe(0);
    expect(device!.destroyed).toBe(true);
    client.socket.destroy();
  });

  it('closing the endpoint ends the device side of every stream', async () => {
    const client = await online();
    client.send(A_OPEN, 9, 0, Buffer.from('shell:sleep 100\0'));
    expect((await client.next())?.command).toBe(A_OKAY);
    expect(endpoint!.openStreams).toBe(1);
    const report = await endpoint!.close();
    expect(report).toEqual({ connections: 1, streams: 1 });
    expect(device!.destroyed).toBe(true);
    expect((await client.next()) ?? 'closed').toBe('closed');
  });
});
