/**
 * A second real S3-compatible server for the tests that need S3's conditional writes: moto's S3
 * (Python, shipped with this machine image: `python3 -c 'import moto'`) on 127.0.0.1, random port.
 * s3rver ignores `If-None-Match: *` and `If-Match` on PUT (it overwrites), so it cannot show that a
 * compare-and-swap holds; moto answers 412 PreconditionFailed for both, as AWS S3 does.
 *
 * moto's threaded server checks a precondition and then writes without a lock, so two requests in
 * flight at once could both pass the check. AWS S3 makes a conditional write atomic; to give the
 * tests that same guarantee we serve moto's WSGI app from a single-threaded werkzeug server (one
 * request at a time, HTTP/1.0 so no connection is held open between requests). Nothing of moto is
 * changed or mocked: every byte the store sends is parsed and answered by moto's S3 implementation.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

const SERVE = `
import sys
from werkzeug.serving import make_server
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
app = DomainDispatcherApplication(create_backend_app)
server = make_server('127.0.0.1', 0, app, threaded=False)
print(server.port, flush=True)
server.serve_forever()
`;

export interface MotoS3Server {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Create a fresh random bucket and return its name. */
  createBucket(): Promise<string>;
  /** Environment for a `devicebridge` process that should talk to this server. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

export async function startMotoServer(): Promise<MotoS3Server> {
  const child: ChildProcess = spawn('python3', ['-c', SERVE], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`moto S3 server did not start within 30 s: ${stderr}`));
    }, 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = /^(\d+)\n/.exec(out);
      if (line) {
        clearTimeout(timer);
        resolve(Number(line[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new Error(
          `moto S3 server exited (${code}) before listening; it needs python3 with moto installed: ${stderr}`,
        ),
      );
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'moto-test', secretAccessKey: 'moto-test' };
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    region: 'us-east-1',
    ...credentials,
    async createBucket() {
      const bucket = `race-${randomBytes(6).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      return bucket;
    },
    env() {
      return {
        S3_ENDPOINT: endpoint,
        S3_REGION: 'us-east-1',
        S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      };
    },
    async stop() {
      client.destroy();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
