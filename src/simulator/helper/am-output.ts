/**
 * `am instrument`'s text framing, as its status reporter prints it on a device: each bundle key on
 * its own `INSTRUMENTATION_STATUS: key=value` line, then `INSTRUMENTATION_STATUS_CODE: N`; the
 * final bundle as `INSTRUMENTATION_RESULT: key=value` lines, then `INSTRUMENTATION_CODE: N`. Bundles
 * are hash maps on Android, so key order is not fixed: we shuffle with the device's seeded PRNG.
 */

export type Bundle = Array<[key: string, value: string]>;

/** Fisher–Yates with the device PRNG; returns a new array. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    const tmp = out[i] as T;
    out[i] = out[j] as T;
    out[j] = tmp;
  }
  return out;
}

export function formatStatus(bundle: Bundle, code: number, random: () => number): string {
  let out = '';
  for (const [key, value] of shuffled(bundle, random)) out += `INSTRUMENTATION_STATUS: ${key}=${value}\n`;
  return `${out}INSTRUMENTATION_STATUS_CODE: ${code}\n`;
}

export function formatResult(bundle: Bundle, code: number, random: () => number): string {
  let out = '';
  for (const [key, value] of shuffled(bundle, random)) out += `INSTRUMENTATION_RESULT: ${key}=${value}\n`;
  return `${out}INSTRUMENTATION_CODE: ${code}\n`;
}

/** What `am` prints when the instrumented process dies (crash or `am force-stop`): RESULT_CANCELED. */
export const PROCESS_CRASHED = 'INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n';

/** `key=value` header lines of a session response, shuffled like a Bundle's keySet(), then a blank line. */
export function formatSessionHeaders(bundle: Bundle, random: () => number): string {
  let out = '';
  for (const [key, value] of shuffled(bundle, random)) out += `${key}=${value.replace(/[\r\n]/g, ' ')}\n`;
  return `${out}\n`;
}
