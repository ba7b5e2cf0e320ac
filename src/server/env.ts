import type { HttpBindings } from '@hono/node-server';
import type { AdbRuntime } from '../adb/runtime.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import type { Config } from '../config.ts';
import type { NodeDirectory } from '../devices/nodes.ts';
import type { DeviceRegistry } from '../devices/registry.ts';
import type { LeaseOperations } from '../helpers/lease-operations.ts';
import type { LeaseManager } from '../leases/manager.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import type { Authenticator, Principal } from './auth.ts';
import type { RateLimiter } from './rate-limit.ts';

/** Everything a route needs, built once at boot (tests build their own). */
export interface Services {
  config: Config;
  store: ArtifactStore;
  releases: ReleaseRepository;
  auth: Authenticator;
  logger: Logger;
  metrics: Metrics;
  /** Rate limits: failed authentications per address; expensive calls per token and per address. */
  limits: { authFailures: RateLimiter; expensive: RateLimiter };
  /**
   * The bridge's own base URL for `apkUrl`s and for other nodes (from configuration: the public URL,
   * or the loopback listen address); undefined when neither exists.
   */
  publicUrl?: string;
  /** Directory for request-scoped temporary files (uploads). */
  tmpDir: string;
  /** The device side, when this node drives devices (absent: manifests and artifacts only). */
  devices?: DeviceRegistry;
  leases?: LeaseManager;
  operations?: LeaseOperations;
  adb?: AdbRuntime;
  /** This node's name and the directory of every node's URL (scale-out). */
  node?: { name: string; nodes: NodeDirectory };
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
