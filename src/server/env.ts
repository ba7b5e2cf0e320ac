import type { HttpBindings } from '@hono/node-server';
import type { ArtifactStore } from '../artifacts/store.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import type { Authenticator, Principal } from './auth.ts';

/** Everything a route needs, built once at boot (tests build their own). */
export interface Services {
  config: Config;
  store: ArtifactStore;
  releases: ReleaseRepository;
  auth: Authenticator;
  logger: Logger;
  metrics: Metrics;
  /** Directory for request-scoped temporary files (uploads). */
  tmpDir: string;
}

export interface AppEnv {
  Bindings: Partial<HttpBindings>;
  Variables: {
    services: Services;
    requestId: string;
    principal: Principal | null;
    logger: Logger;
  };
}
