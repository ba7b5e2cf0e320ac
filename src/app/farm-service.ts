/**
 * The farm use cases of a lease (issue 14): shell commands (and, below, the app under test). The
 * routes call them with a scope `LeaseScopes.open` resolved; what reaches a method runs on this
 * node (the HTTP edge forwarded calls for devices other nodes drive) or is refused naming the owner.
 */
import {
  type AppActionResult,
  type LeaseAppBody,
  type LogcatQuery,
  SHELL_LIMITS,
  type ShellRequest,
  type ShellResponse,
  type ShellStreamRequest,
} from '../api/farm.ts';
import { assertPackageName } from '../helpers/farm/apps.ts';
import type { ShellInput } from '../helpers/farm/shell.ts';
import type { LeaseOperations } from '../helpers/lease-operations.ts';
import type { LeaseScope, LeaseScopes } from './lease-scope.ts';

export interface FarmServiceOptions {
  scopes: LeaseScopes;
  operations: LeaseOperations;
}

export class FarmService {
  readonly #o: FarmServiceOptions;

  constructor(options: FarmServiceOptions) {
    this.#o = options;
  }

  /** Run one command; the caller's capability was checked at the edge. */
  async shell(scope: LeaseScope, request: ShellRequest): Promise<ShellResponse> {
    const input: ShellInput =
      request.argv !== undefined ? { argv: request.argv } : { command: request.command ?? '' };
    const outcome = await this.#o.operations.shell(this.#o.scopes.local(scope), input, {
      timeoutMs: request.timeoutMs ?? SHELL_LIMITS.defaultTimeoutMs,
      maxOutputBytes: request.maxOutputBytes ?? SHELL_LIMITS.defaultMaxOutputBytes,
    });
    return {
      exitCode: outcome.exitCode,
      stdout: outcome.stdout.toString('utf8'),
      stderr: outcome.stderr.toString('utf8'),
      truncated: outcome.truncated,
      durationMs: Math.round(outcome.durationMs),
    };
  }

  /** Run one command, its output streamed as NDJSON ShellEvents; the capability was checked at the edge. */
  shellStream(scope: LeaseScope, request: ShellStreamRequest): Promise<ReadableStream<Uint8Array>> {
    const input: ShellInput =
      request.argv !== undefined ? { argv: request.argv } : { command: request.command ?? '' };
    return this.#o.operations.shellEvents(this.#o.scopes.local(scope), input, {
      timeoutMs: request.timeoutMs ?? SHELL_LIMITS.defaultTimeoutMs,
    });
  }

  /** Install an uploaded APK file or a published artifact (by sha256) as the lease's app under test. */
  installApp(
    scope: LeaseScope,
    source: { file: string } | { sha256: string },
    options: { installArgs?: readonly string[]; keep?: boolean },
  ): Promise<LeaseAppBody> {
    return this.#o.operations.installApp(this.#o.scopes.local(scope), source, options);
  }

  async listApps(scope: LeaseScope): Promise<{ apps: LeaseAppBody[] }> {
    return { apps: await this.#o.operations.apps(this.#o.scopes.local(scope)) };
  }

  /** Launch (the launcher activity or `component`), stop, clear or uninstall a package. */
  appAction(
    scope: LeaseScope,
    packageName: string,
    action: 'launch' | 'stop' | 'clear' | 'uninstall',
    component?: string,
  ): Promise<AppActionResult> {
    assertPackageName(packageName);
    return this.#o.operations.appAction(this.#o.scopes.local(scope), packageName, action, component);
  }

  /** The lease's logcat as NDJSON (one LogEntry per line), ending when the lease ends. */
  logcat(scope: LeaseScope, query: LogcatQuery): Promise<ReadableStream<Uint8Array>> {
    const filter = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    return this.#o.operations.logcat(this.#o.scopes.local(scope), filter);
  }
}
