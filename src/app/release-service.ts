/**
 * Release use cases: publish an uploaded APK or dex jar as a helper release (the route and `release
 * publish` take the same fields: a version, the kind, optionally `installArgs` as text, the
 * instrumentation runner, and the glass kinds' main class, socket, device path, service component).
 */

import type { PublishFields } from '../api/helpers.ts';
import type { FileDigest } from '../artifacts/hash.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { parseInstallArgsString } from '../manifest/index.ts';
import type { Metrics } from '../observability/metrics.ts';
import { type PublishResult, publishRelease } from '../releases/publish.ts';

/** The contract's publish fields (`installArgs` as words; default per the publisher), for a file. */
export interface PublishInput extends PublishFields {
  apkPath: string;
  /** The file's sha256 and size when already known (an upload hashes while it is written). */
  digest?: FileDigest;
  name?: string;
  version: string;
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

const PASSED_THROUGH = [
  'kind',
  'runner',
  'mainClass',
  'socketName',
  'devicePath',
  'serviceComponent',
] as const;

export class ReleaseService {
  readonly #store: ArtifactStore;
  readonly #metrics: Pick<Metrics, 'publishes'> | undefined;

  constructor(options: { store: ArtifactStore; metrics?: Pick<Metrics, 'publishes'> }) {
    this.#store = options.store;
    this.#metrics = options.metrics;
  }

  /** Publish (or find the identical release already there), counted by outcome. */
  async publish(input: PublishInput): Promise<PublishResult> {
    const result = await publishRelease(this.#store, {
      apkPath: input.apkPath,
      ...(input.digest === undefined ? {} : { digest: input.digest }),
      version: input.version,
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.installArgs === undefined ? {} : { installArgs: parseInstallArgsString(input.installArgs) }),
      ...Object.fromEntries(PASSED_THROUGH.filter((k) => input[k] !== undefined).map((k) => [k, input[k]])),
    });
    this.#metrics?.publishes.inc({ outcome: result.status });
    return result;
  }
}
