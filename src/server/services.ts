import path from 'node:path';
import { ReleaseService } from '../app/release-service.ts';
import { openArtifactStore, storeSpecFromConfig } from '../artifacts/open-store.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { Authenticator } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { createMetrics } from '../observability/metrics.ts';
import { ReleaseRepository } from '../releases/repository.ts';
import type { Services } from './env.ts';
import { publicBaseUrl } from './public-url.ts';
import { RateLimiter } from './rate-limit.ts';
import { UploadGate } from './upload-gate.ts';

/** The artifact store the configuration names: S3 when S3_BUCKET is set, else `<dataDir>/artifacts`. */
export function storeFromConfig(config: Config): ArtifactStore {
  return openArtifactStore(storeSpecFromConfig(config), config);
}

export function buildServices(
  config: Config,
  overrides: Partial<Services> & { logger?: Logger } = {},
): Services {
  const store = overrides.store ?? storeFromConfig(config);
  const publicUrl = overrides.publicUrl ?? publicBaseUrl(config);
  const metrics = overrides.metrics ?? createMetrics({ defaults: true });
  return {
    ...(publicUrl === undefined ? {} : { publicUrl }),
    config,
    store,
    releases: overrides.releases ?? new ReleaseRepository(store),
    auth: overrides.auth ?? Authenticator.fromFile(config.tokensFile),
    logger: overrides.logger ?? createLogger(config.logLevel, undefined, config.logFormat),
    metrics,
    publisher: overrides.publisher ?? new ReleaseService({ store, metrics }),
    limits: overrides.limits ?? {
      authFailures: new RateLimiter(config.rateAuthFailures),
      expensive: new RateLimiter(config.rateExpensive),
    },
    tmpDir: overrides.tmpDir ?? path.join(config.dataDir, 'tmp'),
    uploads: overrides.uploads ?? new UploadGate(),
  };
}
