/**
 * The one rule for the `data` of a streamed shell event (ShellEvent in api/farm.ts, read by the
 * client's parser in client/shell-events.ts): padded base64 as the bridge writes it (Node's
 * `toString('base64')`), so its length is a multiple of 4 and `=` pads only the last group. Pure and
 * without zod: the client imports it too.
 */
export const SHELL_EVENT_DATA_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Is `data` a shell event's output chunk as the bridge encodes it (padded base64)? */
export function isShellEventData(data: string): boolean {
  return SHELL_EVENT_DATA_PATTERN.test(data);
}
