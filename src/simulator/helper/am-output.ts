/**
 * `am instrument`'s text framing, as its status reporter prints it on a device: each bundle key on
 * its own `INSTRUMENTATION_STATUS: key=value` line, then `INSTRUMENTATION_STATUS_CODE: N`; the
 * final bundle as `INSTRUMENTATION_RESULT: key=value` lines, then `INSTRUMENTATION_CODE: N`. Keys
 * come in String order: `com.android.commands.am.Instrument`'s TextStatusReporter prints
 * `sorted(results.keySet())`. Our helper writes its session headers in the same order, so the
 * simulator emits the bytes the real helper does (test/integration/contract-snapshot-helper.test.ts).
 */

export type Bundle = Array<[key: string, value: string]>;

/**
 * Bundle entries in Java String order (UTF-16 code units, as `Collections.sort` of the keys); a key
 * given twice keeps its last value, as `Bundle.putString` does.
 */
export function sortedEntries(bundle: Bundle): Bundle {
  const map = new Map<string, string>();
  for (const [key, value] of bundle) map.set(key, value);
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `random` is unused: kept so that callers need not change (keys are sorted like `am` does). */
export function formatStatus(bundle: Bundle, code: number, _random?: () => number): string {
  let out = '';
  for (const [key, value] of sortedEntries(bundle)) out += `INSTRUMENTATION_STATUS: ${key}=${value}\n`;
  return `${out}INSTRUMENTATION_STATUS_CODE: ${code}\n`;
}

export function formatResult(bundle: Bundle, code: number, _random?: () => number): string {
  let out = '';
  for (const [key, value] of sortedEntries(bundle)) out += `INSTRUMENTATION_RESULT: ${key}=${value}\n`;
  return `${out}INSTRUMENTATION_CODE: ${code}\n`;
}

/** What `am` prints when the instrumented process dies (crash or `am force-stop`): RESULT_CANCELED. */
export const PROCESS_CRASHED = 'INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n';

/** `key=value` header lines of a session response in String order (as our helper writes them), then a blank line. */
export function formatSessionHeaders(bundle: Bundle, _random?: () => number): string {
  let out = '';
  for (const [key, value] of sortedEntries(bundle)) out += `${key}=${value.replace(/[\r\n]/g, ' ')}\n`;
  return `${out}\n`;
}
