/**
 * A real S3-compatible server for integration tests: s3rver on 127.0.0.1 (random port) over a temp
 * directory, with one random DNS-valid bucket. Use path-style addressing. What s3rver checks: the
 * access key id (S3RVER) and presigned-URL expiry. What it does not: SigV4 signatures themselves
 * (a garbled signature is accepted) and `If-None-Match: *` / `If-Match` on PUT (it overwrites).
 * Tests of conditional writes use moto instead (moto-server.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  httpServer?: import('node:http').Server;
  close(): Promise<void>;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;

export interface S3TestServer {
  /** e.g. `http://127.0.0.1:41234` */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** `METHOD /path?query` of every request the server received, in arrival order (test-only log). */
  requests: string[];
  stop(): Promise<void>;
}

export async function startS3Server(): Promise<S3TestServer> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'devicebridge-s3rver-'));
  const bucket = `test-${randomBytes(6).toString('hex')}`;
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  const requests: string[] = [];
  server.httpServer?.on('request', (req: import('node:http').IncomingMessage) => {
    requests.push(`${req.method} ${req.url}`);
  });
  let stopped = false;
  return {
    requests,
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    region: 'us-east-1',
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.close().catch(() => undefined);
      await rm(directory, { recursive: true, force: true });
    },
  };
}
