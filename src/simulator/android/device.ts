/**
 * `SimDevice`: what the helper emulation sees of its device — properties, packages, in-device
 * listeners (`tcp:PORT` / `localabstract:NAME`), the UI, recorded input and the fault knobs.
 */
import { Duplex } from 'node:stream';
import { builtinScreenXml, generateUiXml } from '../helper/index.ts';
import { mulberry32 } from '../prng.ts';
import type { DeviceListener, Faults, InstalledPackage, Instrumentation, SimDevice } from '../types.ts';
import { SimLogBuffer } from './log.ts';
import { isTapGesture, UiScreen } from './screen.ts';

export type ListenAddress = { tcp: number } | { abstract: string };

export interface SimDeviceOptions {
  serial: string;
  props: Record<string, string>;
  faults: Faults;
  seed: number;
  uiXml?: string;
  nodes?: number;
  packages: (packageName: string) => InstalledPackage | undefined;
  allPackages: () => Iterable<InstalledPackage>;
}

export function addressKey(address: ListenAddress): string {
  return 'tcp' in address ? `tcp:${address.tcp}` : `localabstract:${address.abstract}`;
}

interface ListenerEntry {
  onConnection: (socket: Duplex) => void;
  sockets: Set<Duplex>;
}

export class SimDeviceImpl implements SimDevice {
  readonly serial: string;
  readonly faults: Faults;
  readonly #props: Record<string, string>;
  readonly #options: SimDeviceOptions;
  readonly #listeners = new Map<string, ListenerEntry>();
  readonly #inputEvents: Array<Record<string, unknown>> = [];
  readonly #screenWatchers = new Set<() => void>();
  readonly #random: () => number;
  /** The screen: what uiautomator dumps and the a11y service serves; input edits it. */
  readonly screen: UiScreen;
  /** What `logcat` reads: the emulated system logs installs, launches and instrumentations here. */
  readonly log = new SimLogBuffer();
  /** The activity shown over the screen by `am start` (its package) and the screen it covers. */
  #activity: { packageName: string; covered: string } | null = null;
  /** The system clipboard's primary clip as text (the glass agent reads and sets it); null when empty. */
  clipboard: string | null = null;
  /** Long-running processes started from a shell (the glass agent, background jobs), for `ps`/`kill`. */
  readonly #processes = new Map<number, { cmdline: string; ppid: number; kill(): void }>();
  #nextPid = 4200;

  /** A fresh pid for a short-lived process (a shell, `ps` itself) that is not kept in the table. */
  allocatePid(): number {
    return this.#nextPid++;
  }

  /**
   * Register a running process; returns its pid, a function to call when it exits by itself and one
   * to change its command line (a background job that `exec`s, as `nohup CMD` does).
   */
  startProcess(
    cmdline: string,
    kill: () => void,
    ppid = 1,
  ): { pid: number; exited(): void; rename(cmdline: string): void } {
    const pid = this.#nextPid++;
    const entry = { cmdline, ppid, kill };
    this.#processes.set(pid, entry);
    return {
      pid,
      exited: () => {
        if (this.#processes.get(pid) === entry) this.#processes.delete(pid);
      },
      rename: (next) => {
        entry.cmdline = next;
      },
    };
  }

  /** Kill one registered process by pid; false when no such process runs. */
  kill(pid: number): boolean {
    const entry = this.#processes.get(pid);
    if (entry === undefined) return false;
    this.#processes.delete(pid);
    entry.kill();
    return true;
  }

  /**
   * `pkill -f PATTERN` as toybox runs it: PATTERN is an extended regular expression matched anywhere
   * in the command line (`.` matches any character). Kills every match; returns how many. Throws a
   * SyntaxError for a pattern that is not a regular expression.
   */
  killMatching(pattern: string): number {
    const re = new RegExp(pattern);
    let killed = 0;
    for (const [pid, p] of [...this.#processes]) {
      if (!re.test(p.cmdline)) continue;
      this.#processes.delete(pid);
      p.kill();
      killed++;
    }
    return killed;
  }

  /** Running processes as `pid cmdline` (and parent pid), oldest first. */
  processes(): Array<{ pid: number; cmdline: string; ppid: number }> {
    return [...this.#processes].map(([pid, p]) => ({ pid, cmdline: p.cmdline, ppid: p.ppid }));
  }

  constructor(options: SimDeviceOptions) {
    this.serial = options.serial;
    this.faults = options.faults;
    this.#props = options.props;
    this.#options = options;
    this.#random = mulberry32(options.seed);
    const { uiXml, nodes, seed } = options;
    this.screen = new UiScreen(
      () => uiXml ?? (nodes !== undefined && nodes > 0 ? generateUiXml(nodes, seed) : builtinScreenXml()),
      () => this.#screenChanged(),
    );
  }

  getprop(key: string): string | undefined {
    return this.#props[key];
  }

  /** All properties (sorted by key), for `getprop` without arguments. */
  allProps(): Array<[string, string]> {
    return Object.entries(this.#props).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  findPackage(packageName: string): InstalledPackage | undefined {
    return this.#options.packages(packageName);
  }

  findInstrumentation(
    component: string,
  ): { pkg: InstalledPackage; instrumentation: Instrumentation } | undefined {
    const slash = component.indexOf('/');
    if (slash <= 0 || slash === component.length - 1) return undefined;
    const packageName = component.slice(0, slash);
    const cls = component.slice(slash + 1);
    const className = cls.startsWith('.') ? `${packageName}${cls}` : cls;
    const pkg = this.findPackage(packageName);
    const own = pkg?.instrumentations.find((i) => i.name === className);
    if (pkg !== undefined && own !== undefined) return { pkg, instrumentation: own };
    return undefined;
  }

  listen(address: ListenAddress, onConnection: (socket: Duplex) => void): DeviceListener {
    const key = addressKey(address);
    if (this.#listeners.has(key)) throw new Error(`bind ${key}: Address already in use`);
    const entry: ListenerEntry = { onConnection, sockets: new Set() };
    this.#listeners.set(key, entry);
    return {
      close: () => {
        if (this.#listeners.get(key) === entry) this.#listeners.delete(key);
      },
    };
  }

  /** Connect from the host side; undefined when nothing listens (connection refused). */
  connect(address: ListenAddress): Duplex | undefined {
    const entry = this.#listeners.get(addressKey(address));
    if (entry === undefined) return undefined;
    const [host, device] = duplexPair();
    entry.sockets.add(device);
    device.once('close', () => entry.sockets.delete(device));
    queueMicrotask(() => entry.onConnection(device));
    return host;
  }

  /** Addresses currently listened on (`tcp:PORT`, `localabstract:NAME`). */
  listening(): string[] {
    return [...this.#listeners.keys()];
  }

  uiXml(): string {
    return this.screen.xml();
  }

  /**
   * An activity of `packageName` comes to the front showing `xml` (a fresh instance each launch);
   * the screen it covers comes back when the package is stopped.
   */
  startActivity(packageName: string, xml: string): void {
    const covered = this.#activity === null ? this.screen.xml() : this.#activity.covered;
    this.#activity = { packageName, covered };
    this.screen.show(xml);
  }

  /** `am force-stop` (or an uninstall) of `packageName`: its activity goes, the screen it covered returns. */
  stopActivities(packageName: string): void {
    if (this.#activity?.packageName !== packageName) return;
    this.screen.show(this.#activity.covered);
    this.#activity = null;
  }

  displaySize(): { width: number; height: number } {
    return { width: 1080, height: 2400 };
  }

  touch(points: ReadonlyArray<{ x: number; y: number }>): void {
    const [first] = points;
    if (first !== undefined && isTapGesture(points)) this.screen.tap(first.x, first.y);
  }

  recordInput(event: Record<string, unknown>): void {
    this.#inputEvents.push({ ...event });
    // The picture shows recent touches: an input may change it.
    this.#screenChanged();
  }

  /**
   * Call `listener` whenever what the screen shows may have changed (the UI document, or an input
   * recorded); synchronously, from inside the change: a listener defers its own work. Returns the
   * function that stops the calls.
   */
  watchScreen(listener: () => void): () => void {
    const entry = () => listener();
    this.#screenWatchers.add(entry);
    return () => this.#screenWatchers.delete(entry);
  }

  #screenChanged(): void {
    for (const listener of this.#screenWatchers) listener();
  }

  /** How many input events were recorded (a cheap way to see that the shown touches changed). */
  get inputCount(): number {
    return this.#inputEvents.length;
  }

  /** Input events recorded so far (oldest first), for tests. */
  inputEvents(): Array<Record<string, unknown>> {
    return this.#inputEvents.map((e) => ({ ...e }));
  }

  random(): number {
    return this.#random();
  }

  /** Close every in-device listener and the connections they accepted. */
  shutdown(): void {
    for (const pid of [...this.#processes.keys()]) this.kill(pid);
    for (const entry of this.#listeners.values()) {
      for (const socket of entry.sockets) socket.destroy();
    }
    this.#listeners.clear();
  }
}

/** FNV-1a 32-bit hash of a string (default seed from the serial). */
export function hashString(value: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    h ^= value.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Two connected in-process duplex streams: bytes written to one are read from the other, `end()`
 * on one is EOF on the other, `destroy()` on one ends the other. Backpressure is honoured: a write
 * completes once the peer's reader has room.
 */
export function duplexPair(): [Duplex, Duplex] {
  const sides: Duplex[] = [];
  const waiting: Array<(() => void) | undefined> = [undefined, undefined];
  const ended = [false, false];
  const make = (index: 0 | 1): Duplex => {
    const peerIndex = index === 0 ? 1 : 0;
    const deliverEof = (): void => {
      const peer = sides[peerIndex];
      if (peer !== undefined && !ended[peerIndex] && !peer.destroyed) {
        ended[peerIndex] = true;
        peer.push(null);
      }
    };
    return new Duplex({
      read() {
        const resume = waiting[index];
        waiting[index] = undefined;
        resume?.();
      },
      write(chunk: Buffer, _encoding, callback) {
        const peer = sides[peerIndex];
        if (peer === undefined || peer.destroyed || ended[peerIndex]) {
          callback();
          return;
        }
        if (peer.push(chunk)) callback();
        else waiting[peerIndex] = () => callback();
      },
      final(callback) {
        deliverEof();
        callback();
      },
      destroy(error, callback) {
        deliverEof();
        const resume = waiting[peerIndex];
        waiting[peerIndex] = undefined;
        resume?.();
        callback(error);
      },
    });
  };
  sides.push(make(0), make(1));
  return [sides[0] as Duplex, sides[1] as Duplex];
}
