/**
 * `tcp:PORT` (also `tcp:HOST:PORT` for loopback hosts) and `localabstract:NAME`: a bidirectional
 * pipe between the stream and a listener inside the emulated device (`SimAndroid.connect`).
 * Backpressure both ways: the device side is paused while the host lags, and the host's `OKAY` waits
 * until the device side accepted the bytes.
 */
import type { Duplex } from 'node:stream';
import type { SimAndroid } from '../../types.ts';
import type { AdbStream } from '../stream.ts';

type SocketAddress = { tcp: number } | { abstract: string };

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0']);
/** Pause the in-device socket when this much is queued towards the host. */
const HIGH_WATER = 2 * 1024 * 1024;

/** `tcp:5000` → `{tcp: 5000}`, `localabstract:x` → `{abstract: 'x'}`; undefined when not such a service. */
export function parseSocketService(service: string): SocketAddress | undefined {
  if (service.startsWith('tcp:')) {
    const rest = service.slice(4);
    const colon = rest.lastIndexOf(':');
    const host = colon < 0 ? undefined : rest.slice(0, colon);
    const portText = colon < 0 ? rest : rest.slice(colon + 1);
    if (host !== undefined && !LOOPBACK_HOSTS.has(host)) return undefined;
    if (!/^\d{1,5}$/.test(portText)) return undefined;
    const port = Number(portText);
    return port >= 1 && port <= 65535 ? { tcp: port } : undefined;
  }
  if (service.startsWith('localabstract:')) {
    const name = service.slice('localabstract:'.length);
    return name.length > 0 ? { abstract: name } : undefined;
  }
  return undefined;
}

/** Connect inside the device; undefined = refused (the caller answers `CLSE`). */
export function connectSocket(android: SimAndroid, address: SocketAddress): Duplex | undefined {
  return android.connect(address);
}

export function pipeSocket(duplex: Duplex, stream: AdbStream): void {
  let paused = false;
  duplex.on('data', (chunk: Buffer) => {
    stream.write(chunk);
    if (!paused && stream.queuedBytes > HIGH_WATER) {
      paused = true;
      duplex.pause();
      void stream.drained().then(() => {
        paused = false;
        if (!duplex.destroyed) duplex.resume();
      });
    }
  });
  // adbd closes the whole stream once the local socket reports EOF or an error.
  duplex.on('end', () => stream.close());
  duplex.on('close', () => stream.close());
  duplex.on('error', () => stream.close());

  stream.setReceiver((data) => {
    if (duplex.destroyed || duplex.writableEnded) return;
    if (duplex.write(data)) return;
    return new Promise<void>((resolve) => {
      const done = (): void => {
        duplex.off('drain', done);
        duplex.off('close', done);
        resolve();
      };
      duplex.on('drain', done);
      duplex.on('close', done);
    });
  });
  stream.onClose(() => {
    if (!duplex.destroyed && !duplex.writableEnded) duplex.end();
  });
}
