/** What a shell command implementation gets to work with. */
import type { Faults, ShellIO } from '../types.ts';
import type { SimDeviceImpl } from './device.ts';
import type { MemoryFileSystem } from './fs.ts';
import type { PackageManager } from './package-manager.ts';
import type { SettingsStore } from './settings.ts';
import type { StdinReader } from './shell/stdin.ts';

/** The emulated Android system behind one device's shell. */
export interface AndroidRuntime {
  readonly device: SimDeviceImpl;
  readonly fs: MemoryFileSystem;
  readonly packages: PackageManager;
  readonly settings: SettingsStore;
}

export interface CommandContext {
  readonly io: ShellIO;
  readonly stdin: StdinReader;
  /** Exported variables plus `VAR=value` prefixes of this command. */
  readonly env: ReadonlyMap<string, string>;
  /** Working directory (absolute). */
  readonly cwd: string;
  readonly android: AndroidRuntime;
  /** The shell running this command: its pid and command line (`/system/bin/sh -c SCRIPT`). */
  readonly shell: { readonly pid: number; readonly cmdline: string };
  /** Run a nested script (`sh -c`), sharing this context's I/O. */
  runScript(source: string, argv0?: string): Promise<number>;
  /** Run another command in place of this one (`nohup CMD`, `exec`), sharing this context's I/O. */
  runArgv(argv: string[]): Promise<number>;
  /**
   * Register a long-running process (`ps` lists it, `kill` and `pkill` end it). Inside a background
   * job this is the job's own process, which takes `cmdline`.
   */
  startProcess(cmdline: string, kill: () => void): { pid: number; exited(): void };
  /** Running as a background job (`CMD &`): nothing waits for it, it must not keep Node alive. */
  readonly detached: boolean;
}

/**
 * The host closing the shell is a hang-up: it runs `stop` (ends a long-running process) unless the
 * device lets processes outlive their shell (the survive-hangup fault, a real device's way); then
 * only a kill does.
 */
export function stopOnHangUp(ctx: CommandContext, stop: () => void): void {
  const hangUp = (): void => {
    if (ctx.android.device.faults.surviveHangup !== true) stop();
  };
  if (ctx.io.signal.aborted) hangUp();
  else ctx.io.signal.addEventListener('abort', hangUp, { once: true });
}

/** A command: argv excludes the command name; resolves to the exit status. */
export type CommandFn = (argv: string[], ctx: CommandContext) => Promise<number>;

/**
 * The `fail-command=NAME` fault: when NAME is this command, say so on stderr and give the exit
 * status 1 to return instead of running it; undefined otherwise.
 */
export function simulatedFailure(name: string, io: ShellIO, faults: Faults): number | undefined {
  if (faults.failCommand === undefined || faults.failCommand !== name) return undefined;
  io.stderr(`${name}: simulated failure\n`);
  return 1;
}

/** Resolve a path argument against the command's working directory. */
export function resolvePath(ctx: CommandContext, path: string): string {
  if (path.startsWith('/')) return path;
  return `${ctx.cwd === '/' ? '' : ctx.cwd}/${path}`;
}
