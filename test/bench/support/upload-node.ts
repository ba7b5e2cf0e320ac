/**
 * A bridge node for the upload-memory bench, run as `node --import tsx upload-node.ts DATA_DIR`:
 * the app with a filesystem artifact store in DATA_DIR, no tokens (loopback) and an upload gate
 * wide enough for the bench's concurrent uploads (the default admits 4 per node). Prints its URL
 * as one JSON line, then serves until killed. The bench reads this process's peak RSS (VmHWM).
 */
import { serve } from '@hono/node-server';
import { Authenticator } from '../../../src/auth/tokens.ts';
import { loadConfig } from '../../../src/config.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { createMetrics } from '../../../src/observability/metrics.ts';
import { createApp } from '../../../src/server/app.ts';
import { buildServices } from '../../../src/server/services.ts';
import { UploadGate } from '../../../src/server/upload-gate.ts';

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error('usage: upload-node.ts DATA_DIR');
const uploads = Number(process.env['BENCH_UPLOAD_GATE'] ?? 64);
const config = loadConfig(
  {
    DEVICEBRIDGE_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    DEVICEBRIDGE_MAX_UPLOAD_BYTES: String(256 * 1024 * 1024),
  },
  {},
);
const services = buildServices(config, {
  logger: silentLogger(),
  metrics: createMetrics(),
  auth: new Authenticator([]),
  uploads: new UploadGate({ perTenant: uploads, perNode: uploads }),
});
const app = createApp(services);
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${info.port}` })}\n`);
});
