/**
 * Device Bridge as a library: manifests and their validation, artifact stores, publishing, the ADB
 * layer, the snapshot-helper driver and its protocol code, snapshot normalisation, and the device
 * simulator. (`devicebridge/client` is the typed HTTP client.)
 */
export { AdbClient } from './adb/client.ts';
export { AdbRuntime } from './adb/runtime.ts';
export { AdbServer } from './adb/server.ts';
export { quoteShellArg, shellCommand } from './adb/shell-quote.ts';
export { TunnelManager } from './adb/tunnels.ts';
export { readApkInfo } from './artifacts/apk-file.ts';
export { ArtifactCache } from './artifacts/cache.ts';
export { openArtifactStore } from './artifacts/open-store.ts';
export type { ArtifactStore } from './artifacts/store.ts';
export { type Config, loadConfig } from './config.ts';
export { BridgeError, ERROR_CODES, type ErrorCode } from './errors.ts';
export { adbHelperDevice, type HelperDevice } from './helpers/snapshot/device.ts';
export { SnapshotDriver, type Transport } from './helpers/snapshot/driver.ts';
export { type EnsurePolicy, EnsureVerdicts, ensureHelper } from './helpers/snapshot/ensure-helper.ts';
export * from './manifest/index.ts';
export {
  BIND_ACCESSIBILITY_SERVICE,
  isJavaComponent,
  isJavaPackageName,
  resolveComponent,
} from './protocol/android/java-names.ts';
export { assembleSnapshotChunks, interpretSnapshotResult } from './protocol/helper/chunks.ts';
export {
  InstrumentationOutputParser,
  parseInstrumentationOutput,
} from './protocol/helper/instrumentation-output.ts';
export { buildSessionRequest, parseSessionResponse } from './protocol/helper/session-frames.ts';
export * from './protocol/helper/touch-plan.ts';
export { publishRelease } from './releases/publish.ts';
export { ReleaseRepository } from './releases/repository.ts';
export { startSimulator } from './simulator/index.ts';
export { normalizeSnapshot } from './snapshot/normalize.ts';
