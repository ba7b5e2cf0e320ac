import type { HttpBindings } from '@hono/node-server';
import type { DeviceSide, LeaseScope } from '../app/index.ts';
import type { ReleaseService } from '../app/release-service.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import type { ConsoleSessions } from '../auth/console-sessions.ts';
import type { Authenticator, Principal } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { McpHttpSessions } from '../mcp/http-sessions.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import type { SnapshotAnswerOptions } from '../snapshot/json-writer.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { UploadGate } from './upload-gate.ts';
import type { WebSocketUpgrade } from './websocket.ts';

/** Everything a route needs, built once at boot (tests build their own). */
export interface Services {
  config: Config;
  store: ArtifactStore;
  releases: ReleaseRepository;
  /** Publishing releases (the use case the publish route calls). */
  publisher: ReleaseService;
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
  /** Concurrent uploads per tenant and per node (routes whose guard says `upload`). */
  uploads: UploadGate;
  /** The device side's use cases, when this node drives devices (absent: manifests and artifacts only). */
  deviceSide?: DeviceSide;
  /**
   * Set when the node starts shutting down: `/readyz` answers not-ready, every answer closes its
   * keep-alive connection (`Connection: close`).
   */
  draining?: boolean;
  /** Console sessions (src/auth/console-sessions.ts): in Redis when configured; absent: this app's memory. */
  consoleSessions?: ConsoleSessions;
  /** The MCP sessions of `/mcp` (in this node's memory); absent: the app makes its own. */
  mcpSessions?: McpHttpSessions;
  /**
   * How the snapshot route writes its answer (the streaming threshold, a probe at each piece):
   * absent in service (the defaults); benches set it to measure.
   */
  snapshotAnswer?: SnapshotAnswerOptions;
  /** What `/readyz` checks besides the artifact store (the device side adds its adb server and lease store). */
  readiness?: Record<string, () => Promise<unknown>>;
}

export interface AppEnv {
  /** Node's request (`incoming`), and `upgrade` on a WebSocket upgrade request (`websocket.ts`). */
  Bindings: Partial<HttpBindings> & { upgrade?: WebSocketUpgrade };
  Variables: {
    services: Services;
    requestId: string;
    principal: Principal | null;
    logger: Logger;
    /**
     * A lease-scoped call's lease, read once by the route's guard (which forwards to the owner node
     * when another node drives the device): settled, so its failure is answered by the handler
     * after validation, as if it had been read there.
     */
    leaseScope: Promise<LeaseScope> | undefined;
    /**
     * Set when forwarding to the owner failed and the route answers here (`forward: 'or-here'`): the
     * owner may have done the work already, only its answer was lost.
     */
    ownerUnreachable: boolean | undefined;
  };
}
