/**
 * Where a served manifest's `apkUrl` points. It comes only from configuration — never from the
 * request's Host (a Host-derived URL, served `Cache-Control: public`, let anyone poison shared caches):
 * `DEVICEBRIDGE_PUBLIC_URL`, else the address the bridge listens on when that is loopback. Requests
 * whose Host the bridge does not answer for still get the configured origin (no 421): nothing in any
 * response is derived from Host, so there is nothing to vary on. Every URL the bridge may put into a
 * manifest must pass the manifest's own `apkUrl` rule; a configuration that would not is refused at
 * start, naming the variable.
 */
import { type Config, ConfigError, isLoopbackHost } from '../config.ts';
import { apkUrlProblem } from '../manifest/index.ts';

const SAMPLE_SHA256 = '0'.repeat(64);

/** `http://127.0.0.1:7100`, `http://[::1]:7100` for a loopback listen address; else undefined. */
export function loopbackListenUrl(host: string, port: number): string | undefined {
  if (!isLoopbackHost(host)) return undefined;
  const h = host.replace(/^\[|\]$/g, '');
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

/** The configured base, else the loopback listen address (the port configured, or bound later). */
export function publicBaseUrl(config: Config, port = config.port): string | undefined {
  return config.publicUrl ?? loopbackListenUrl(config.host, port);
}

/** Whether the artifact store serves its own `apkUrl`s (S3 public base or presigned URLs). */
function storeServesApkUrls(config: Config): boolean {
  return (
    config.s3Bucket !== undefined && (config.s3PublicBaseUrl !== undefined || config.s3PresignSeconds > 0)
  );
}

/**
 * Refuse, before anything starts, a configuration under which the bridge would serve manifests its
 * own validator rejects (e.g. `http:` on a non-loopback host) or could not name an `apkUrl` at all.
 */
export function assertApkUrlsValid(config: Config): void {
  if (config.publicUrl !== undefined) {
    const url = new URL(config.publicUrl);
    if (url.search !== '' || url.hash !== '') {
      throw new ConfigError('DEVICEBRIDGE_PUBLIC_URL', 'must not carry a query or fragment');
    }
    const problem = apkUrlProblem(`${config.publicUrl.replace(/\/+$/, '')}/v1/artifacts/${SAMPLE_SHA256}`);
    if (problem !== null) {
      throw new ConfigError('DEVICEBRIDGE_PUBLIC_URL', `served apkUrls would be invalid: apkUrl ${problem}`);
    }
  }
  if (config.s3PublicBaseUrl !== undefined) {
    const problem = apkUrlProblem(`${config.s3PublicBaseUrl.replace(/\/+$/, '')}/blobs/${SAMPLE_SHA256}`);
    if (problem !== null) {
      throw new ConfigError('S3_PUBLIC_BASE_URL', `served apkUrls would be invalid: apkUrl ${problem}`);
    }
  } else if (config.s3PresignSeconds > 0 && config.s3Endpoint !== undefined) {
    const endpoint = new URL(config.s3Endpoint);
    if (endpoint.protocol === 'http:' && !isLoopbackHost(endpoint.hostname)) {
      throw new ConfigError(
        'S3_ENDPOINT',
        'presigned apkUrls on an http: endpoint are valid only on a loopback host; use https:',
      );
    }
  }
  if (!storeServesApkUrls(config) && publicBaseUrl(config) === undefined) {
    throw new ConfigError(
      'DEVICEBRIDGE_PUBLIC_URL',
      `required when binding ${config.host} (not loopback): served apkUrls must be https: (set it to the bridge's https:// URL)`,
    );
  }
}
