/**
 * `adb push` of 64 MiB through the real adb server (private port) to a simulated device, in MB/s
 * (10^6 bytes per second, wall time of the `adb push` process). Baseline: a raw loopback TCP copy of the
 * same bytes in the same run. Also reports `adb pull` of the same file. Target: push ≥ 50 MB/s.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../../src/simulator/index.ts';
import { startAdbServer } from '../integration/support/adb-server.ts';

const SIZE = 64 * 1024 * 1024;
const RUNS = 3;

interface Figure {
  bench: string;
  value: number;
  unit: string;
  baseline: string | null;
  ratio: number | null;
}

const mbps = (bytes: number, ms: number): number => bytes / 1e6 / (ms / 1000);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** Copy `data` over a loopback TCP connection; resolves with the ms until the receiver had every byte. */
async function rawLoopbackCopy(data: Buffer): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    const received = new Promise<void>((resolve) => {
      server.once('connection', (socket) => {
        let got = 0;
        socket.on('data', (chunk: Buffer) => {
          got += chunk.length;
          if (got >= data.length) resolve();
        });
      });
    });
    const start = performance.now();
    const client = netConnect(port, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    for (let offset = 0; offset < data.length; offset += 1024 * 1024)
      client.write(data.subarray(offset, offset + 1024 * 1024));
    await received;
    const ms = performance.now() - start;
    client.destroy();
    return ms;
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export async function bench(): Promise<Figure[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-push-'));
  const data = randomBytes(SIZE);
  const local = join(dir, 'payload.bin');
  await writeFile(local, data);
  const sim = await startSimulator({ port: 0 });
  const device = sim.devices[0]!;
  const adb = await startAdbServer();
  try {
    await adb.connect(device.address);
    const push: number[] = [];
    const pull: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      raw.push(mbps(SIZE, await rawLoopbackCopy(data)));

      let start = performance.now();
      const pushed = await adb.adb(['-s', device.serial, 'push', local, '/data/local/tmp/payload.bin'], {
        timeoutMs: 120_000,
      });
      push.push(mbps(SIZE, performance.now() - start));
      if (pushed.code !== 0) throw new Error(`adb push failed: ${pushed.stdout.toString()}${pushed.stderr}`);
      const onDevice = device.android.fs.readFile('/data/local/tmp/payload.bin');
      if (onDevice === undefined || sha256(onDevice) !== sha256(data)) throw new Error('pushed bytes differ');

      const back = join(dir, 'back.bin');
      start = performance.now();
      const pulled = await adb.adb(['-s', device.serial, 'pull', '/data/local/tmp/payload.bin', back], {
        timeoutMs: 120_000,
      });
      pull.push(mbps(SIZE, performance.now() - start));
      if (pulled.code !== 0) throw new Error(`adb pull failed: ${pulled.stdout.toString()}${pulled.stderr}`);
      if (sha256(await readFile(back)) !== sha256(data)) throw new Error('pulled bytes differ');
    }
    const rawMbps = median(raw);
    const baseline = 'raw loopback TCP copy of 64 MiB';
    return [
      {
        bench: 'simulator adb push 64 MiB',
        value: median(push),
        unit: 'MB/s',
        baseline,
        ratio: median(push) / rawMbps,
      },
      {
        bench: 'simulator adb pull 64 MiB',
        value: median(pull),
        unit: 'MB/s',
        baseline,
        ratio: median(pull) / rawMbps,
      },
      { bench: 'raw loopback TCP copy 64 MiB', value: rawMbps, unit: 'MB/s', baseline: null, ratio: null },
    ];
  } finally {
    await adb.stop();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
