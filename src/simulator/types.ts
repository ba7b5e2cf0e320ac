/**
 * Contract between the simulator's adbd/shell layer (src/simulator/*) and the emulated on-device
 * helpers (src/simulator/helper/*). The shell layer owns devices, packages, the file system and
 * faults; the helper layer implements `am instrument` for installed helper APKs.
 */
import type { Duplex } from 'node:stream';

/** Output side of one shell command. `stdout`/`stderr` accept text (UTF-8) or bytes. */
export interface ShellIO {
  stdout(data: string | Uint8Array): void;
  stderr(data: string | Uint8Array): void;
  /** Aborted when the host closes the stream (e.g. `adb shell` killed) or the device goes offline. */
  signal: AbortSignal;
  /** Bytes written and not yet taken by the host (a slow reader makes it grow). */
  backlog?(): number;
}

export interface Instrumentation {
  /** Fully qualified class name, e.g. `com.callstack.agentdevice.snapshothelper.SnapshotInstrumentation`. */
  name: string;
  targetPackage: string;
}

export interface InstalledPackage {
  packageName: string;
  versionCode: number;
  versionName: string;
  /** Path of the installed APK inside the device, as `pm path` prints it (without `package:`). */
  apkPath: string;
  sha256: string;
  testOnly: boolean;
  /** sha256 (lower-case hex) of the signer certificate, or null when unsigned. */
  signerSha256: string | null;
  instrumentations: Instrumentation[];
}

/** What the connection-level faults did to a device's output so far (over all its connections). */
export interface FaultEffects {
  /** Messages sent only after being held for `latencyMs`. */
  delayedMessages: number;
  /** Bytes sent paced under `bandwidthBytesPerSec`. */
  pacedBytes: number;
}

/** Fault knobs (all optional; absent = no fault). Parsed from `--fault SPEC` by the shell layer. */
export interface Faults {
  /** Drop the device's TCP connection after this many bytes sent to the host. */
  dropAfterBytes?: number;
  /** Fixed latency added before each message the device sends. */
  latencyMs?: number;
  /** Cap on bytes per second the device sends. */
  bandwidthBytesPerSec?: number;
  /** Snapshot helper output faults on chunk `index` (0-based). */
  chunk?: { action: 'drop' | 'duplicate' | 'corrupt'; index: number };
  /** The helper process crashes (`INSTRUMENTATION_RESULT: shortMsg=Process crashed.`). */
  helperCrash?: boolean;
  /** The helper never answers (hangs until the caller gives up). */
  helperTimeout?: boolean;
  /** Every install fails with this code, e.g. `INSTALL_FAILED_INSUFFICIENT_STORAGE`. */
  installFailure?: string;
  /** The device goes offline this many ms after it connected. */
  offlineAfterMs?: number;
  /** The device answers CNXN with AUTH and never accepts: `unauthorized` in `adb devices`. */
  unauthorized?: boolean;
  /** The link stays up but the device sends nothing (queued until the fault is lifted). */
  stall?: boolean;
  /**
   * One shot: the running glass agent dies on the next request it reads — no reply, the connection
   * drops, its process exits (status 137) and `localabstract:glass-agent` goes away. Cleared as it fires.
   */
  glassAgentDeath?: boolean;
  /**
   * One shot: the running glass agent stops listening on the next request it reads — no reply, the
   * connection drops and `localabstract:glass-agent` goes away — while its process keeps running
   * (alive but deaf, as an agent whose accept loop died). Cleared as it fires.
   */
  glassAgentDeaf?: boolean;
  /**
   * The glass a11y service is unbound (its socket goes away) until the secure settings change again
   * (which clears this) or the fault is lifted.
   */
  glassA11yUnbind?: boolean;
  /**
   * The screen is off (or the keyguard is up): no window is active, so the glass a11y service,
   * though bound and answering `ping`, refuses `tree` ("no active window"), as on a real device.
   */
  noActiveWindow?: boolean;
  /**
   * Input injection is blocked for the shell uid, as on MIUI / HyperOS / ColorOS until "USB
   * debugging (Security settings)" is switched on: the glass agent's pointer, key and text requests
   * fail with the platform's INJECT_EVENTS SecurityException (ping and the clipboard still work).
   */
  injectBlocked?: boolean;
  /**
   * A device policy restricts accessibility services (a device admin's permitted list): enabling
   * the glass a11y service in secure settings never binds it, whatever the settings say.
   */
  a11yPolicyBlocked?: boolean;
  /** One shot: the next reply line of a glass component (agent or a11y) is torn garbage. Cleared as it fires. */
  glassMalformed?: boolean;
  /**
   * Processes started from a shell (the glass agent's `app_process`, an `am instrument`'s
   * instrumentation) keep running when their shell closes or the host goes away, as on a real
   * device (adbd's hang-up does not reach an instrumentation; an agent may outlive it): only a kill
   * (`pkill`, `am force-stop`) or the device's shutdown stops them.
   */
  surviveHangup?: boolean;
  /** Every `screenrecord` stops at this many seconds, whatever its `--time-limit` (at most 180 s). */
  screenrecordLimitS?: number;
  /**
   * The glass agent's screen encoder cannot encode (as where MediaCodec refuses the virtual display):
   * `app_process … ScreenMain` prints the exception and exits 1 before it listens.
   */
  screenEncoderFail?: boolean;
  /**
   * The glass agent's screen encoder crashes mid-stream: every `app_process … ScreenMain` dies this
   * many seconds after its client connected (a fatal signal on stderr, exit status 139).
   */
  screenEncoderDieAfterS?: number;
  /**
   * Every run of this command (`rm`, `pm`, `settings`, ...; also as `toybox NAME`, and `pm` as
   * `cmd package` or `abb_exec:package`) writes `NAME: simulated failure` to stderr and exits 1.
   */
  failCommand?: string;
}

export interface DeviceListener {
  close(): void;
}

/** What the helper emulation may see and do on its device. */
export interface SimDevice {
  readonly serial: string;
  /** `ro.build.version.sdk` etc. */
  getprop(key: string): string | undefined;
  findPackage(packageName: string): InstalledPackage | undefined;
  /** Find the package declaring instrumentation `component` (`pkg/.Class` or `pkg/full.Class`). */
  findInstrumentation(
    component: string,
  ): { pkg: InstalledPackage; instrumentation: Instrumentation } | undefined;
  /** Listen inside the device; reachable by the host through `tcp:PORT` or `localabstract:NAME`. */
  listen(
    address: { tcp: number } | { abstract: string },
    onConnection: (socket: Duplex) => void,
  ): DeviceListener;
  /** The current UI as uiautomator XML (from `--ui FILE`, `--nodes N` or the built-in screen). */
  uiXml(): string;
  /** Display size in pixels, as `wm size` prints it. */
  displaySize(): { width: number; height: number };
  /** Record an injected input event (gestures, `input tap`), for tests to inspect. */
  recordInput(event: Record<string, unknown>): void;
  /** One pointer's touch reached the screen: a tap on an editable node gives it the input focus. */
  touch?(points: ReadonlyArray<{ x: number; y: number }>): void;
  /** The system clipboard's primary clip as text (the glass agent reads and sets it); null when empty. */
  clipboard: string | null;
  readonly faults: Faults;
  /** Seeded PRNG in [0, 1), so randomised behaviour (faults) is reproducible per device. */
  random(): number;
  /**
   * Monotonic milliseconds for the emulated helper's `elapsedMs` (default `performance.now()`); a
   * frozen clock makes its output byte-for-byte reproducible (the contract tests).
   */
  now?(): number;
}

/** A shell command implementation: argv excludes the command name; resolves to the exit code. */
export type ShellCommand = (argv: string[], io: ShellIO, device: SimDevice) => Promise<number>;

export interface FileStat {
  type: 'file' | 'dir';
  size: number;
  /** Full st_mode as adb's sync protocol expects it (e.g. 0o100644 for a file, 0o40755 for a dir). */
  mode: number;
  mtimeSec: number;
}

/** The device's in-memory file system (what `sync:` and the shell see). Paths are absolute. */
export interface SimFileSystem {
  stat(path: string): FileStat | undefined;
  readFile(path: string): Uint8Array | undefined;
  /** Throws an Error whose message is what Android would print (e.g. `Read-only file system`). */
  writeFile(path: string, data: Uint8Array, options?: { mode?: number; mtimeSec?: number }): void;
  list(path: string): Array<{ name: string; stat: FileStat }> | undefined;
  mkdirp(path: string): void;
  remove(path: string): boolean;
}

/**
 * One emulated Android device behind the adbd wire protocol: the shell interpreter, file system,
 * package manager and in-device listeners. Built by `createSimAndroid` (src/simulator/android/index.ts);
 * the adbd layer (src/simulator/adbd/) only moves bytes to and from it.
 */
export interface SimAndroid {
  readonly device: SimDevice;
  readonly fs: SimFileSystem;
  /** Run a shell command line (`shell:`, `shell,v2,...:`, `exec:`); stdin is the host's input. */
  run(commandLine: string, io: ShellIO, stdin: AsyncIterable<Uint8Array>): Promise<number>;
  /** Run an argv without shell parsing (`abb_exec:package\0install\0...` becomes `['cmd','package','install',...]`). */
  runArgv(argv: string[], io: ShellIO, stdin: AsyncIterable<Uint8Array>): Promise<number>;
  /** Connect to a listener inside the device; undefined means connection refused. */
  connect(address: { tcp: number } | { abstract: string }): Duplex | undefined;
  /** `ro.product.name`, `ro.product.model`, `ro.product.device` for the CNXN banner. */
  bannerProps(): Record<string, string>;
  /** Stop everything running inside the device (helper sessions, listeners). */
  shutdown(): void;
  /** Addresses listened on inside the device (`tcp:PORT`, `localabstract:NAME`). */
  listening(): string[];
  /** Long-running processes started from a shell (`pkill` targets), as `pid cmdline`. */
  processes?(): Array<{ pid: number; cmdline: string }>;
  /** The faults changed at run time (the a11y service unbinds or rebinds). */
  faultsChanged?(): void;
}

export interface SimAndroidOptions {
  serial: string;
  /** uiautomator XML shown on screen; default: the built-in screen. */
  uiXml?: string;
  /** Generate a large UI tree with this many nodes instead (benchmarks). */
  nodes?: number;
  seed?: number;
  faults?: Faults;
  /** Extra or overriding system properties. */
  props?: Record<string, string>;
  /** Synthetic log lines per second written into the device's log (load tests); default none. */
  logRate?: number;
  /** Third-party apps installed before anyone connects (a farm's own apps); not system packages. */
  preinstalled?: readonly PreinstalledPackage[];
}

/** An app on the device from the start: listed by `pm list packages -3`, uninstallable. */
export interface PreinstalledPackage {
  packageName: string;
  versionCode: number;
  versionName?: string;
}
