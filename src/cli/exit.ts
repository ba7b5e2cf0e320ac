/** Documented exit codes of every `devicebridge` command. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Thrown by a command to end with a usage error (exit 2) and a message on stderr. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Thrown by a command to end with a given exit code after it has printed its own output. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
    this.name = 'ExitCode';
  }
}
