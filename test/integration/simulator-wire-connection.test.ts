/**
 * The device side of the transport spoken to byte by byte from a raw host over loopback TCP, with a
 * tiny fake Android (a mock of our own interface): handshake, maxdata, flow control, shell v2 framing.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeShellPacket, ShellPacketDecoder } from '../../src/protocol/adb/shell-protocol.ts';
import {
  A_AUTH,
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_WRTE,
  type AdbMessage,
  AUTH_SIGNATURE,
  AUTH_TOKEN,
  commandName,
  encodeMessage,
  MessageDecoder,
} from '../../src/protocol/adb/transport-message.ts';
import { AdbdConnection, DEVICE_FEATURES } from '../../src/simulator/adbd/connection.ts';
import type { Faults, ShellIO, SimAndroid } from '../../src/simulator/types.ts';

function fakeAndroid(): SimAndroid {
  const run = async (line: string, io: ShellIO, stdin: AsyncIterable<Uint8Array>): Promise<number> => {
    const [cmd, ...args] = line.split(' ');
    if (cmd === 'echo') {
      io.stdout(`${args.join(' ')}\n`);
      return 0;
    }
    if (cmd === 'big') {
      io.stdout(Buffer.alloc(Number(args[0]), 0x61));
      return 0;
    }
    if (cmd === 'err') {
      io.stderr('oops\n');
      return Number(args[0]);
    }
    if (cmd === 'cat') {
      for await (const chunk of stdin) io.stdout(chunk);
      return 0;
    }
    io.stderr(`/system/bin/sh: ${cmd}: inaccessible or not found\n`);
    return 127;
  };
  return {
    device: {} as SimAndroid['device'],
    fs: {} as SimAndroid['fs'],
    run,
    runArgv: (argv, io, stdin) => run(argv.join(' '), io, stdin),
    connect: () => undefined,
    bannerProps: () => ({
      'ro.product.name': 'fake',
      'ro.product.model': 'Fake_Model',
      'ro.product.device': 'fk',
    }),
    shutdown: () => {},
    listening: () => [],
  };
}

class RawHost {
  #decoder = new MessageDecoder();
  #queue: AdbMessage[] = [];
  #waiters: Array<() => void> = [];
  closed = false;
  bytes = 0;
  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      this.#queue.push(...this.#decoder.push(chunk));
      for (const w of this.#waiters.splice(0)) w();
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.#waiters.splice(0)) w();
    });
  }
  send(command: number, arg0: number, arg1: number, data: string | Buffer = ''): void {
    this.socket.write(encodeMessage({ command, arg0, arg1, data: Buffer.from(data) }));
  }
  async next(timeoutMs = 2000): Promise<AdbMessage> {
    const deadline = Date.now() + timeoutMs;
    while (this.#queue.length === 0) {
      if (this.closed) throw new Error('connection closed');
      if (Date.now() > deadline) throw new Error('timed out waiting for a message');
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.#queue.shift()!;
  }
  async expect(command: number): Promise<AdbMessage> {
    const m = await this.next();
    expect(commandName(m.command)).toBe(commandName(command));
    return m;
  }
  async handshake(maxData = 1024 * 1024): Promise<AdbMessage> {
    this.send(A_CNXN, 0x01000001, maxData, 'host::features=shell_v2,cmd\0');
    return this.expect(A_CNXN);
  }
  /** Read a stream's output to CLSE, acknowledging each WRTE; returns the payloads. */
  async readStream(localId: number): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for (;;) {
      const m = await this.next();
      if (m.command === A_CLSE) return out;
      if (m.command === A_OKAY && m.arg1 === localId) continue; // acknowledges one of our WRTEs
      expect(commandName(m.command)).toBe('WRTE');
      expect(m.arg1).toBe(localId);
      out.push(Buffer.from(m.data));
      this.send(A_OKAY, localId, m.arg0);
    }
  }
}

let server: Server | undefined;
const sockets: Socket[] = [];

async function start(faults: Faults = {}, requireAuth = false): Promise<RawHost> {
  const android = fakeAndroid();
  server = createServer((socket) => {
    new AdbdConnection(socket, { android, faults: () => faults, requireAuth });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  return new RawHost(socket);
}

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe('AdbdConnection', () => {
  it('answers CNXN with the negotiated version and maxdata and a device banner', async () => {
    const host = await start();
    const cnxn = await host.handshake(256 * 1024);
    expect(cnxn.arg0).toBe(0x01000001);
    expect(cnxn.arg1).toBe(256 * 1024);
    const banner = Buffer.from(cnxn.data).toString('utf8');
    expect(banner).toBe(
      `device::ro.product.name=fake;ro.product.model=Fake_Model;ro.product.device=fk;features=${DEVICE_FEATURES.join(',')}`,
    );
  });

  it('splits output at a small maxdata and sends the next WRTE only after OKAY', async () => {
    const host = await start();
    await host.handshake(4096);
    host.send(A_OPEN, 7, 0, 'shell:big 10000\0');
    const okay = await host.expect(A_OKAY);
    expect(okay.arg1).toBe(7);
    const first = await host.expect(A_WRTE);
    expect(first.data.length).toBe(4096);
    // Nothing else may arrive before we acknowledge.
    await expect(host.next(200)).rejects.toThrow(/timed out/);
    host.send(A_OKAY, 7, first.arg0);
    const rest = await host.readStream(7);
    expect(rest.map((b) => b.length)).toEqual([4096, 10000 - 8192]);
  });

  it('runs shell v2 with stdout/stderr packets and the exit status', async () => {
    const host = await start();
    await host.handshake();
    host.send(A_OPEN, 3, 0, 'shell,v2,TERM=xterm,raw:err 42\0');
    await host.expect(A_OKAY);
    const packets = new ShellPacketDecoder().push(Buffer.concat(await host.readStream(3)));
    expect(packets.map((p) => [p.id, Buffer.from(p.data).toString()])).toEqual([
      [2, 'oops\n'],
      [3, '*'],
    ]);
  });

  it('feeds v2 stdin packets to the process until close-stdin', async () => {
    const host = await start();
    await host.handshake();
    host.send(A_OPEN, 4, 0, 'shell,v2,raw:cat\0');
    const okay = await host.expect(A_OKAY);
    host.send(
      A_WRTE,
      4,
      okay.arg0,
      Buffer.concat([
        encodeShellPacket(0, Buffer.from('hello ')),
        encodeShellPacket(0, Buffer.from('world')),
      ]),
    );
    host.send(A_WRTE, 4, okay.arg0, encodeShellPacket(4, Buffer.alloc(0)));
    const packets = new ShellPacketDecoder().push(Buffer.concat(await host.readStream(4)));
    const stdout = Buffer.concat(packets.filter((p) => p.id === 1).map((p) => p.data)).toString();
    expect(stdout).toBe('hello world');
    expect(packets.at(-1)?.id).toBe(3);
  });

  it('serves many concurrent streams on one connection', async () => {
    const host = await start();
    await host.handshake();
    const ids = Array.from({ length: 20 }, (_, i) => i + 100);
    for (const id of ids) host.send(A_OPEN, id, 0, `shell:echo stream-${id}\0`);
    const outputs = new Map<number, string>();
    const closed = new Set<number>();
    while (closed.size < ids.length) {
      const m = await host.next();
      if (m.command === A_WRTE) {
        outputs.set(m.arg1, (outputs.get(m.arg1) ?? '') + Buffer.from(m.data).toString());
        host.send(A_OKAY, m.arg1, m.arg0);
      } else if (m.command === A_CLSE) {
        closed.add(m.arg1);
      }
    }
    for (const id of ids) expect(outputs.get(id)).toBe(`stream-${id}\n`);
  });

  it('refuses unknown services and refused sockets with CLSE(0, id)', async () => {
    const host = await start();
    await host.handshake();
    host.send(A_OPEN, 9, 0, 'framebuffer:\0');
    const clse = await host.expect(A_CLSE);
    expect([clse.arg0, clse.arg1]).toEqual([0, 9]);
    host.send(A_OPEN, 10, 0, 'tcp:5000\0');
    expect((await host.expect(A_CLSE)).arg1).toBe(10);
  });

  it('challenges with AUTH and never accepts when auth is required', async () => {
    const host = await start({}, true);
    host.send(A_CNXN, 0x01000001, 1 << 20, 'host::\0');
    const token = await host.expect(A_AUTH);
    expect(token.arg0).toBe(AUTH_TOKEN);
    expect(token.data.length).toBe(20);
    host.send(A_AUTH, AUTH_SIGNATURE, 0, Buffer.alloc(256));
    expect((await host.expect(A_AUTH)).arg0).toBe(AUTH_TOKEN);
    host.send(A_OPEN, 1, 0, 'shell:echo no\0');
    await expect(host.next(300)).rejects.toThrow(/timed out/);
  });

  it('drops the connection after exactly dropAfterBytes bytes', async () => {
    const host = await start({ dropAfterBytes: 1000 });
    await host.handshake();
    host.send(A_OPEN, 1, 0, 'shell:big 5000\0');
    await host.expect(A_OKAY);
    await expect(host.readStream(1)).rejects.toThrow(/closed/);
    expect(host.bytes).toBe(1000);
  });

  it('drops a connection that sends a bad magic', async () => {
    const host = await start();
    await host.handshake();
    const bad = encodeMessage({ command: A_OPEN, arg0: 1, arg1: 0, data: Buffer.from('shell:echo\0') });
    bad.writeUInt32LE(0, 20);
    host.socket.write(bad);
    await expect(host.next()).rejects.toThrow(/closed/);
  });
});
