/**
 * One emulated Android device: file system, package manager, settings, shell and in-device
 * listeners, behind the `SimAndroid` contract the adbd layer drives.
 */
import type { Duplex } from 'node:stream';
import { GlassA11yService } from '../glass/a11y-service.ts';
import { forceStop } from '../helper/index.ts';
import { mulberry32 } from '../prng.ts';
import type { ShellIO, SimAndroid, SimAndroidOptions } from '../types.ts';
import { createCommandTable } from './commands/index.ts';
import type { AndroidRuntime, CommandFn } from './context.ts';
import { hashString, type ListenAddress, SimDeviceImpl } from './device.ts';
import { createAndroidFileSystem, type MemoryFileSystem } from './fs.ts';
import { startSyntheticLog } from './log.ts';
import { PackageManager, systemPackageFiles } from './package-manager.ts';
import { buildPropText, defaultProps } from './props.ts';
import { SettingsStore } from './settings.ts';
import { Shell } from './shell/interpreter.ts';
import { StdinReader } from './shell/stdin.ts';

export { SimDeviceImpl } from './device.ts';
export type { PackageRecord } from './package-manager.ts';

/** `SimAndroid` plus inspection hooks for tests and the CLI. */
export interface SimAndroidHandle extends SimAndroid {
  readonly device: SimDeviceImpl;
  readonly fs: MemoryFileSystem;
  readonly runtime: AndroidRuntime;
  /** Input events recorded by `input ...` and the helper's gestures (oldest first). */
  inputEvents(): Array<Record<string, unknown>>;
  /** The glass a11y service's lifecycle (bound while enabled in secure settings). */
  readonly glassA11y: GlassA11yService;
}

export function createSimAndroid(options: SimAndroidOptions): SimAndroidHandle {
  const props = { ...defaultProps(options.serial), ...options.props };
  const seed = options.seed ?? hashString(options.serial);
  const faults = options.faults ?? {};
  const fs = createAndroidFileSystem({
    '/system/build.prop': buildPropText(props),
    '/system/bin/sh': 'ELF mksh',
    '/system/bin/toybox': 'ELF toybox',
    ...systemPackageFiles(),
  });
  const pmRandom = mulberry32(seed ^ 0x5eed);
  const packages = new PackageManager({
    fs,
    sdk: () => Number(props['ro.build.version.sdk'] ?? '34'),
    random: pmRandom,
    faults,
  });
  for (const app of options.preinstalled ?? []) packages.preinstall(app);
  const device = new SimDeviceImpl({
    serial: options.serial,
    props,
    faults,
    seed,
    ...(options.uiXml === undefined ? {} : { uiXml: options.uiXml }),
    ...(options.nodes === undefined ? {} : { nodes: options.nodes }),
    packages: (name) => packages.get(name),
    allPackages: () => packages.list(),
  });
  const settings = new SettingsStore(
    Array.from({ length: 16 }, () => Math.floor(pmRandom() * 16).toString(16)).join(''),
  );
  const runtime: AndroidRuntime = { device, fs, packages, settings };
  const a11y = new GlassA11yService(device, settings, packages);
  settings.onChange = (namespace) => {
    if (namespace === 'secure') a11y.settingsChanged();
    else a11y.reconcile();
  };
  packages.onChange = () => a11y.reconcile();
  const commands: Map<string, CommandFn> = createCommandTable();
  const shell = (): Shell => new Shell({ android: runtime, commands });
  const stopSyntheticLog = startSyntheticLog(device.log, options.logRate ?? 0);

  return {
    device,
    fs,
    runtime,
    glassA11y: a11y,
    run(commandLine: string, io: ShellIO, stdin: AsyncIterable<Uint8Array>): Promise<number> {
      return shell().run(commandLine, io, new StdinReader(stdin));
    },
    runArgv(argv: string[], io: ShellIO, stdin: AsyncIterable<Uint8Array>): Promise<number> {
      return shell().runArgv(argv, io, new StdinReader(stdin));
    },
    connect(address: ListenAddress): Duplex | undefined {
      return device.connect(address);
    },
    bannerProps(): Record<string, string> {
      return {
        'ro.product.name': props['ro.product.name'] ?? '',
        'ro.product.model': props['ro.product.model'] ?? '',
        'ro.product.device': props['ro.product.device'] ?? '',
      };
    },
    shutdown(): void {
      stopSyntheticLog();
      a11y.close();
      for (const pkg of packages.list())
        if (pkg.instrumentations.length > 0) forceStop(device, pkg.packageName);
      device.shutdown();
    },
    listening: () => device.listening(),
    processes: () => device.processes(),
    faultsChanged: () => a11y.reconcile(),
    inputEvents: () => device.inputEvents(),
  };
}
