/**
 * One try at reaching the device within a request, as answers and error details list them
 * (`attempts`): through a helper session, a one-shot run, or a glass companion's connection
 * (`glass-agent`, `glass-a11y`). The outcome is `ok` or the code of what failed.
 */
export const ATTEMPT_TRANSPORTS = ['session', 'one-shot', 'glass-agent', 'glass-a11y'] as const;
export type AttemptTransport = (typeof ATTEMPT_TRANSPORTS)[number];

export interface Attempt {
  transport: AttemptTransport;
  outcome: string;
  ms: number;
}

/** An attempt of a helper request (a snapshot, viewport or gesture): a session or a one-shot run. */
export type ServedAttempt = Attempt & { transport: 'session' | 'one-shot' };

/** An attempt's outcome for a failure: its code (a BridgeError's, or a system one like ECONNREFUSED), else ERROR. */
export function attemptOutcome(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : 'ERROR';
}
