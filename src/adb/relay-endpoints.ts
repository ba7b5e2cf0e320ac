/**
 * The adb endpoints of this node, by owner (a lease id), like the forward ledger: `open` starts a
 * relay endpoint (relay-endpoint.ts) for a device and a client key, `close(owner)` stops the
 * owner's endpoints and every stream they relay (lease teardown).
 *
 * One endpoint per (owner, key): opening again with the same key answers the open endpoint (or the
 * open in progress). The caps (per owner, per tenant) count the opens in progress too: each open takes
 * its place before its first await and gives it back if it fails, so concurrent opens cannot all
 * pass a check made before any of them was recorded.
 */
import { BridgeError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { parseEndpoint } from '../protocol/adb/endpoint.ts';
import { advertisedEndpoint, type PortRange, parsePortRange } from '../protocol/adb/relay-policy.ts';
import { deviceBanner } from '../protocol/adb/transport-message.ts';
import type { AdbPublicKey } from './adb-public-key.ts';
import type { AdbClient } from './client.ts';
import { AdbRelayEndpoint } from './relay-endpoint.ts';

/** Endpoints one owner may hold at once. */
export const MAX_ENDPOINTS_PER_OWNER = 4;

/**
 * Features the relay passes on to the client: all the device's, except those that change the
 * transport's own messages (`delayed_ack` counts bytes in OKAY; the relay acknowledges per WRTE).
 */
export function relayedFeatures(features: readonly string[]): string[] {
  return features.filter((f) => f !== 'delayed_ack');
}

/** A banner value: `;`, `=`, `,` and control characters would break the banner's fields. */
function bannerValue(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'device';
}

export interface RelayEndpointsOptions {
  client: Pick<AdbClient, 'openService' | 'features'>;
  /** Where endpoints listen. */
  bindHost: string;
  /** Every `adb reverse` fails with this message (the adb server is not on this host). */
  reverseRefusal?: string;
  /** The host clients are told to `adb connect` to (behind NAT: the public name). */
  advertisedHost: string;
  /** `0` or `FROM-TO`. */
  ports: string | PortRange;
  logger?: Logger;
}

export interface OpenEndpoint {
  /** `host:port` for `adb connect`. */
  endpoint: string;
  host: string;
  port: number;
  /** The registered key's fingerprint. */
  keyFingerprint: string;
  /** The adb serial the client sees (the endpoint). */
  serial: string;
}

export interface EndpointTarget {
  owner: string;
  serial: string;
  deviceId: string;
  key: AdbPublicKey;
  /** False once the owner (lease) ended. */
  alive?: () => Promise<boolean>;
  /** The owner's tenant and how many endpoints it may have open on this node at once. */
  quota?: { tenant: string; limit: number };
}

interface Entry {
  relay: AdbRelayEndpoint;
  view: OpenEndpoint;
  tenant?: string;
}

/** An open in progress: it holds its place under the caps until it is recorded or fails. */
interface Opening {
  owner: string;
  tenant?: string;
  view: Promise<OpenEndpoint>;
}

export class AdbRelayEndpoints {
  readonly #o: RelayEndpointsOptions;
  readonly #ports: PortRange;
  readonly #byOwner = new Map<string, Map<string, Entry>>();
  /** Opens in progress, by owner and key fingerprint (`owner\nfingerprint`). */
  readonly #opening = new Map<string, Opening>();

  constructor(options: RelayEndpointsOptions) {
    this.#o = options;
    this.#ports = typeof options.ports === 'string' ? parsePortRange(options.ports) : options.ports;
    advertisedEndpoint(options.advertisedHost, 1);
  }

  /** Endpoints of `tenant` open (or opening) on this node. */
  #openOf(tenant: string): number {
    let n = 0;
    for (const perOwner of this.#byOwner.values())
      for (const e of perOwner.values()) if (e.tenant === tenant && !e.relay.closed) n += 1;
    for (const o of this.#opening.values()) if (o.tenant === tenant) n += 1;
    return n;
  }

  /** Endpoints the owner holds, with those opening. */
  #heldBy(owner: string): number {
    let n = this.#byOwner.get(owner)?.size ?? 0;
    for (const o of this.#opening.values()) if (o.owner === owner) n += 1;
    return n;
  }

  /** The owner's open endpoints. */
  list(owner: string): OpenEndpoint[] {
    return [...(this.#byOwner.get(owner)?.values() ?? [])].map((e) => e.view);
  }

  /**
   * The owner's endpoint for `target.key`, opened if needed. Everything up to taking a place under the
   * caps is synchronous (no await), so the caps hold for concurrent opens.
   */
  open(target: EndpointTarget): Promise<OpenEndpoint> {
    const { owner, key } = target;
    const existing = this.#byOwner.get(owner)?.get(key.fingerprint);
    if (existing !== undefined && !existing.relay.closed) return Promise.resolve(existing.view);
    const id = `${owner}\n${key.fingerprint}`;
    const inProgress = this.#opening.get(id);
    if (inProgress !== undefined) return inProgress.view;
    try {
      this.#checkCaps(target);
    } catch (err) {
      return Promise.reject(err);
    }
    const place: { opening?: Opening } = {};
    // Given back when the endpoint is recorded (in the same turn) or when the open fails.
    const release = () => {
      if (place.opening !== undefined && this.#opening.get(id) === place.opening) this.#opening.delete(id);
    };
    const view = this.#start(target, release);
    place.opening = {
      owner,
      ...(target.quota === undefined ? {} : { tenant: target.quota.tenant }),
      view,
    };
    this.#opening.set(id, place.opening);
    view.catch(release);
    return view;
  }

  /** Refuse a new endpoint past the owner's cap or the tenant's quota (counting opens in progress). */
  #checkCaps(target: EndpointTarget): void {
    const { owner } = target;
    if (this.#heldBy(owner) >= MAX_ENDPOINTS_PER_OWNER) {
      throw new BridgeError(
        'CONFLICT',
        `lease ${owner} already has ${MAX_ENDPOINTS_PER_OWNER} adb endpoints (one per key)`,
        { retryable: false, details: { limit: MAX_ENDPOINTS_PER_OWNER } },
      );
    }
    if (target.quota !== undefined) {
      const { tenant, limit } = target.quota;
      const open = this.#openOf(tenant);
      if (open >= limit) {
        throw new BridgeError(
          'RATE_LIMITED',
          `tenant ${tenant} has ${open} adb endpoints open or opening on this node, its quota is ${limit}: close one (or release its lease) first`,
          { details: { quota: 'adbEndpoints', limit } },
        );
      }
    }
  }

  /** Open the endpoint; `release` gives back the open's place as the endpoint is recorded. */
  async #start(target: EndpointTarget, release: () => void): Promise<OpenEndpoint> {
    const { owner, key } = target;
    const features = relayedFeatures(await this.#o.client.features(target.serial, { timeoutMs: 10_000 }));
    const model = bannerValue(target.deviceId);
    const banner = deviceBanner(
      { 'ro.product.name': 'devicebridge', 'ro.product.model': model, 'ro.product.device': model },
      features,
    );
    let relay: AdbRelayEndpoint;
    try {
      relay = await AdbRelayEndpoint.listen({
        key,
        banner,
        open: (service) => this.#o.client.openService(target.serial, service, { timeoutMs: 30_000 }),
        ...(target.alive ? { alive: target.alive } : {}),
        bindHost: this.#o.bindHost,
        ports: this.#ports,
        ...(this.#o.reverseRefusal === undefined ? {} : { reverseRefusal: this.#o.reverseRefusal }),
        ...(this.#o.logger ? { logger: this.#o.logger.child({ leaseId: owner }) } : {}),
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new BridgeError(
        'UNAVAILABLE',
        code === 'EADDRINUSE'
          ? `no free port for an adb endpoint in ${this.#ports.from}-${this.#ports.to}`
          : `cannot listen for an adb endpoint on ${this.#o.bindHost}: ${(err as Error).message}`,
      );
    }
    const endpoint = advertisedEndpoint(this.#o.advertisedHost, relay.port);
    const view: OpenEndpoint = {
      endpoint,
      host: parseEndpoint(endpoint).host,
      port: relay.port,
      keyFingerprint: key.fingerprint,
      serial: endpoint,
    };
    release();
    let perOwner = this.#byOwner.get(owner);
    if (perOwner === undefined) {
      perOwner = new Map();
      this.#byOwner.set(owner, perOwner);
    }
    perOwner.set(key.fingerprint, {
      relay,
      view,
      ...(target.quota === undefined ? {} : { tenant: target.quota.tenant }),
    });
    relay.onClose(() => {
      const map = this.#byOwner.get(owner);
      if (map?.get(key.fingerprint)?.relay === relay) map.delete(key.fingerprint);
      if (map?.size === 0) this.#byOwner.delete(owner);
    });
    this.#o.logger?.info({ leaseId: owner, endpoint, key: key.fingerprint }, 'adb endpoint opened');
    return view;
  }

  /** Close the owner's endpoints; one line per endpoint for the teardown record. */
  async close(owner: string): Promise<string[]> {
    const entries = [...(this.#byOwner.get(owner)?.values() ?? [])];
    this.#byOwner.delete(owner);
    const lines: string[] = [];
    for (const { relay, view } of entries) {
      const report = await relay.close();
      const reverses = report.reverses > 0 ? `, ${report.reverses} reverse(s) removed` : '';
      lines.push(
        `closed adb endpoint ${view.endpoint} (${report.connections} connection(s), ${report.streams} stream(s)${reverses})`,
      );
    }
    return lines;
  }

  async closeAll(): Promise<void> {
    for (const owner of [...this.#byOwner.keys()]) await this.close(owner);
  }
}
