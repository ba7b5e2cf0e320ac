/**
 * A device test bed: simulated devices (our simulator over TCP) reached through the bridge's own real
 * adb server on a private port, with the bridge's ADB layer on top. Nothing is mocked.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AdbClient } from '../../src/adb/client.ts';
import { DeviceLocks } from '../../src/adb/device-lock.ts';
import { ForwardLedger } from '../../src/adb/forward-ledger.ts';
import { AdbServer } from '../../src/adb/server.ts';
import { SocketDir } from '../../src/adb/socket-dir.ts';
import { TunnelManager } from '../../src/adb/tunnels.ts';
import { ArtifactCache } from '../../src/artifacts/cache.ts';
import { adbHelperDevice, type HelperDevice } from '../../src/helpers/snapshot/device.ts';
import {
  type AccessibilityServiceManifest,
  type AppProcessJarManifest,
  type HelperManifest,
  validateManifest,
  validateReleaseManifest,
} from '../../src/manifest/index.ts';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.ts';
import { FIXTURES, tempDir } from './bridge.ts';
import { buildDexJar } from './dex-jar.ts';
import { freePort } from './ports.ts';

export interface DeviceBed {
  sim: Simulator;
  server: AdbServer;
  client: AdbClient;
  tunnels: TunnelManager;
  ledger: ForwardLedger;
  locks: DeviceLocks;
  cache: ArtifactCache;
  device(index?: number): HelperDevice;
  close(): Promise<void>;
}

export { freePort } from './ports.ts';

export async function startDeviceBed(options: SimulatorOptions = {}): Promise<DeviceBed> {
  const sim = await startSimulator({ port: 0, count: 1, ...options });
  const tmp = await tempDir('devicebridge-bed-');
  let server: AdbServer | undefined;
  for (let attempt = 0; attempt < 5 && !server; attempt++) {
    const candidate = new AdbServer({ port: await freePort(), backoffMs: 100, maxBackoffMs: 1000 });
    try {
      await candidate.start(10_000);
      server = candidate;
    } catch {
      await candidate.stop();
    }
  }
  if (!server) throw new Error('could not start a private adb server');
  const client = new AdbClient(server.connector);
  const tunnels = new TunnelManager({ client, server, initialBackoffMs: 100, maxBackoffMs: 1000 });
  await tunnels.start();
  for (const d of sim.devices) {
    await tunnels.add(d.address);
    await tunnels.waitFor(d.address, 'device', 10_000);
  }
  // As the bridge's runtime builds it for its own server: forwards from unix sockets.
  const ledger = new ForwardLedger(client, {
    ownsServer: true,
    sockets: new SocketDir('devicebridge-forward-'),
  });
  const locks = new DeviceLocks();
  const cache = new ArtifactCache(path.join(tmp.dir, 'cache'));
  return {
    sim,
    server,
    client,
    tunnels,
    ledger,
    locks,
    cache,
    device: (index = 0) => adbHelperDevice({ client, serial: sim.devices[index]!.serial, ledger, locks }),
    async close() {
      tunnels.stop();
      await server.stop();
      await ledger.dispose();
      await sim.close();
      await tmp.cleanup();
    },
  };
}

interface FixtureEntry {
  file: string;
  packageName: string;
  versionCode: number;
  versionName: string;
  minSdk: number;
  targetSdk: number;
  sha256: string;
  sizeBytes: number;
  instrumentations: Array<{ name: string }>;
  signerSha256: string | null;
}

const fixtures = (
  JSON.parse(readFileSync(path.join(FIXTURES, 'FIXTURES.json'), 'utf8')) as { fixtures: FixtureEntry[] }
).fixtures;

/** A validated snapshot-helper manifest for a fixture APK (as `release publish` would write it). */
export function fixtureManifest(file: string, installArgs = ['install', '-r', '-t']): HelperManifest {
  const f = fixtures.find((x) => x.file === file);
  if (!f) throw new Error(`no fixture ${file}`);
  const verdict = validateManifest({
    name: 'android-snapshot-helper',
    version: f.versionName,
    apkUrl: null,
    sha256: f.sha256,
    packageName: f.packageName,
    versionCode: f.versionCode,
    instrumentationRunner: `${f.packageName}/.SnapshotInstrumentation`,
    minSdk: f.minSdk,
    targetSdk: f.targetSdk,
    outputFormat: 'uiautomator-xml',
    statusProtocol: 'android-snapshot-helper-v1',
    installArgs,
    sizeBytes: f.sizeBytes,
  });
  if (!verdict.valid) throw new Error(JSON.stringify(verdict.errors));
  return verdict.manifest;
}

/** The glass a11y fixture's component (test/fixtures/apk/manifests/a11y-service.xml). */
export const A11Y_FIXTURE_COMPONENT = 'dev.glass.a11y/.GlassAccessibilityService';

/** A validated `accessibility-service-apk` manifest for the a11y fixture APK (socket `glass-a11y`). */
export function a11yFixtureManifest(): AccessibilityServiceManifest {
  const f = fixtures.find((x) => x.file === 'a11y-service.apk');
  if (!f) throw new Error('no fixture a11y-service.apk');
  const verdict = validateReleaseManifest({
    kind: 'accessibility-service-apk',
    name: 'glass-a11y',
    version: f.versionName,
    apkUrl: null,
    sha256: f.sha256,
    packageName: f.packageName,
    versionCode: f.versionCode,
    minSdk: f.minSdk,
    targetSdk: f.targetSdk,
    installArgs: ['install', '-r', '-t'],
    serviceComponent: A11Y_FIXTURE_COMPONENT,
    socketName: 'glass-a11y',
    ...(f.signerSha256 ? { signingCertSha256: f.signerSha256 } : {}),
  });
  if (!verdict.valid || verdict.manifest.kind !== 'accessibility-service-apk') {
    throw new Error(JSON.stringify(verdict.errors));
  }
  return verdict.manifest;
}

/** The APK for a manifest, through the artifact cache (sha256-verified). */
export function fixtureApk(
  cache: ArtifactCache,
  file: string,
  manifest: Pick<HelperManifest, 'sha256'>,
): () => Promise<string> {
  return async () => (await cache.importFile(path.join(FIXTURES, file), manifest.sha256)).path;
}

/** Our glass agent's main class (the simulator also runs seed 001's upstream one). */
export const GLASS_AGENT_MAIN = 'dev.devicebridge.glassagent.Main';

/** The glass agent's encoder mode (docs/live-screen.md). */
export const GLASS_SCREEN_MAIN = 'dev.devicebridge.glassagent.ScreenMain';

/**
 * A glass agent jar for the simulator (a dex jar defining `mainClass`) written into `dir`, and its
 * validated `app-process-jar` manifest (socket `glass-agent`, pushed to /data/local/tmp). The jar
 * defines the encoder mode's main class too unless `screen: false` (an agent without it).
 */
export async function glassAgentFixture(
  dir: string,
  mainClass = GLASS_AGENT_MAIN,
  options: { screen?: boolean } = {},
): Promise<{ jarPath: string; manifest: AppProcessJarManifest }> {
  const jarPath = path.join(dir, 'glass-agent.jar');
  const classes = [mainClass, 'dev.devicebridge.glassagent.core.AgentProtocol'];
  if (options.screen !== false) classes.push(GLASS_SCREEN_MAIN);
  const bytes = buildDexJar(classes);
  await writeFile(jarPath, bytes);
  const verdict = validateReleaseManifest({
    kind: 'app-process-jar',
    name: 'glass-agent',
    version: '1.0.0',
    apkUrl: null,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    mainClass,
    socketName: 'glass-agent',
    devicePath: '/data/local/tmp/glass-agent.jar',
  });
  if (!verdict.valid || verdict.manifest.kind !== 'app-process-jar') throw new Error('bad test manifest');
  return { jarPath, manifest: verdict.manifest };
}

/** A node of a glass a11y `tree` reply (seed 001), as far as the tests read it. */
export interface A11yTreeNode {
  ref: number;
  class: string;
  text?: string;
  editable: boolean;
  children?: A11yTreeNode[];
}

/** Every node of an a11y tree in pre-order (the order of refs). */
export const flattenA11yTree = (n: A11yTreeNode): A11yTreeNode[] => [
  n,
  ...(n.children ?? []).flatMap(flattenA11yTree),
];
