/**
 * AdbClient streams through the real adb server to a simulated device. Pushes go over `sync:` with
 * our own codec. Shell streams respect backpressure: a slow reader of a large output holds the device back; the
 * bridge does not buffer the output in memory (regression: stdout was written without checking
 * `write()`'s return, so everything the device sent piled up in the PassThrough).
 */
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXEC_OUT_MAX_BYTES } from '../../src/adb/client.ts';
import { type DeviceBed, startDeviceBed } from '../support/device-bed.ts';

let bed: DeviceBed;

beforeAll(async () => {
  bed = await startDeviceBed();
});

afterAll(async () => {
  await bed?.close();
});

describe('AdbClient.shellStream backpressure', () => {
  it('keeps what it buffers for a slow reader bounded, and delivers every byte', async () => {
    const device = bed.sim.devices[0]!;
    const size = 24 * 1024 * 1024;
    const data = randomBytes(size);
    device.android.fs.writeFile('/data/local/tmp/big.bin', data);
    const stream = await bed.client.shellStream(device.serial, 'cat /data/local/tmp/big.bin', {
      timeoutMs: 60_000,
    });
    let received = 0;
    let maxBuffered = 0;
    // A reader that takes 8 ms per 64 KiB (8 MB/s): far slower than loopback delivers.
    let pending = 0;
    const slow = new Writable({
      highWaterMark: 64 * 1024,
      write(chunk: Buffer, _enc, callback) {
        received += chunk.length;
        maxBuffered = Math.max(maxBuffered, stream.stdout.readableLength);
        pending += chunk.length;
        if (pending < 64 * 1024) return callback();
        pending = 0;
        setTimeout(callback, 8);
      },
    });
    await pipeline(stream.stdout, slow);
    expect(await stream.exit).toBe(0);
    expect(received).toBe(size);
    // Without backpressure the PassThrough holds most of the 24 MiB; with it, a few socket chunks.
    expect(maxBuffered).toBeLessThan(2 * 1024 * 1024);
  });
});

describe('AdbClient.push over sync:', () => {
  it('delivers every byte with progress, and a refused path fails with the device’s message', async () => {
    const device = bed.sim.devices[0]!;
    const data = randomBytes(3 * 1024 * 1024 + 5);
    const progress: number[] = [];
    await bed.client.push(device.serial, Readable.from([data]), '/data/local/tmp/pushed.bin', {
      onProgress: (n) => progress.push(n),
    });
    // Buffer.equals: a deep toEqual over 3 MiB takes a minute.
    expect(Buffer.from(device.android.fs.readFile('/data/local/tmp/pushed.bin')!).equals(data)).toBe(true);
    expect(progress.at(-1)).toBe(data.length);
    const err = await bed.client
      .push(device.serial, Readable.from([Buffer.from('x')]), '/system/pushed.bin')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ details: expect.objectContaining({ operation: 'push' }) });
    expect(String((err as Error).message)).toMatch(/Read-only file system/);
  });
});

describe('AdbClient.execOut byte cap', () => {
  it('answers the whole output within maxBytes; past it HELPER_FAILED naming the cap, not a growing buffer', async () => {
    const device = bed.sim.devices[0]!;
    const data = randomBytes(256 * 1024);
    device.android.fs.writeFile('/data/local/tmp/exec-cap.bin', data);
    const whole = await bed.client.execOut(device.serial, 'cat /data/local/tmp/exec-cap.bin', {
      maxBytes: data.length,
    });
    expect(whole.equals(data)).toBe(true);
    const err = await bed.client
      .execOut(device.serial, 'cat /data/local/tmp/exec-cap.bin', { maxBytes: 64 * 1024 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'BridgeError',
      code: 'HELPER_FAILED',
      details: { maxBytes: 64 * 1024 },
    });
    expect((err as Error).message).toContain(`more than ${64 * 1024} bytes`);
    // The default cap is generous and the same for every caller.
    expect(EXEC_OUT_MAX_BYTES).toBe(64 * 1024 * 1024);
  });
});
