/**
 * The farm use cases of a lease (issue 14): shell commands (and, below, the app under test). The
 * routes call them with a scope `LeaseScopes.open` resolved; what reaches a method runs on this
 * node (the HTTP edge forwarded calls for devices other nodes drive) or is refused naming the owner.
 */
import { SHELL_LIMITS, type ShellRequest, type ShellResponse } from '../api/farm.ts';
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
}
