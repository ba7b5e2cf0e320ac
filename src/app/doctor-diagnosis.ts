/**
 * The doctor's pure parts: the device's identity from one `getprop` listing, and what a failed
 * check means (a known failure with what to do, or the generic path). Outside input (the device's
 * output, error messages) only; no I/O.
 */
import type { DoctorCheck, DoctorCheckId, DoctorDevice } from '../api/doctor.ts';
import { isBridgeError } from '../errors.ts';

/** One `[key]: [value]` line of `getprop`'s listing. */
const PROP_LINE = /^\[([^\]\r\n]*)\]: \[([^\r\n]*)\]\r?$/;

/**
 * `getprop`'s listing (`[ro.product.model]: [Pixel 8]`, one property a line) as a map. Lines of
 * another shape are skipped; a value keeps its brackets (`[a]b]` is `a]b`); the first occurrence of
 * a key wins.
 */
export function parseGetprop(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = PROP_LINE.exec(line);
    if (m === null) continue;
    const key = m[1] as string;
    if (!out.has(key)) out.set(key, m[2] as string);
  }
  return out;
}

/** The report's device block from the properties (null for what the device does not say). */
export function doctorDevice(props: ReadonlyMap<string, string>): DoctorDevice {
  const text = (key: string): string | null => {
    const v = props.get(key)?.trim();
    return v === undefined || v === '' ? null : v;
  };
  const sdk = text('ro.build.version.sdk');
  return {
    model: text('ro.product.model'),
    manufacturer: text('ro.product.manufacturer'),
    sdk: sdk !== null && /^\d{1,4}$/.test(sdk) ? Number(sdk) : null,
    release: text('ro.build.version.release'),
    fingerprint: text('ro.build.fingerprint'),
  };
}

/** What a failed check says: its detail, error code, and for a known failure the fix. */
export type Diagnosis = Pick<DoctorCheck, 'detail' | 'fix' | 'known' | 'errorCode'>;

export const FIX_TEST_ONLY =
  'The device refuses test-only packages (the helper installs with -t). Allow test-package installs over adb: on Xiaomi, Redmi and POCO (MIUI, HyperOS) switch on Developer options > "Install via USB"; elsewhere ask whoever manages the device whether a policy blocks adb installs. Then run the doctor again.';
export const FIX_USER_RESTRICTED =
  'Installs over adb are switched off: on Xiaomi, Redmi and POCO (MIUI, HyperOS) switch on Developer options > "Install via USB" (and accept the prompt on the device); elsewhere a device policy restricts installs. Then run the doctor again.';
export const FIX_INJECTION =
  'The device blocks input injection from adb: on Xiaomi, Redmi and POCO (MIUI, HyperOS) switch on Developer options > "USB debugging (Security settings)"; on OPPO, realme and OnePlus (ColorOS) switch on "Disable permission monitoring". Then run the doctor again.';
export const FIX_A11Y_RESTRICTED =
  'Enabling the accessibility service did not bind it: an admin policy may restrict accessibility services (a device owner, work profile or MDM). Ask the device administrator to permit the glass a11y service, or look under Settings > Accessibility. Then run the doctor again.';
export const FIX_SCREEN_OFF =
  'No window is active: the screen is off or locked. Wake the device and unlock it (Developer options > Stay awake keeps the screen on while charging), then run the doctor again.';
export const FIX_GENERIC =
  'Not a known failure: send this report (devicebridge doctor --lease ID --json) to the bridge operators.';

/** The longest detail a report carries. */
export const MAX_DETAIL = 600;

export const clip = (text: string): string =>
  text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text;

/** Everything an error says, for matching: its message and its details' strings (a device's reason). */
function wordsOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const details = isBridgeError(err) ? JSON.stringify(err.details ?? {}) : '';
  return `${err.message} ${details}`;
}

/** What the failure of check `id` with `err` means. */
export function diagnose(id: DoctorCheckId, err: unknown): Diagnosis {
  const errorCode = isBridgeError(err) ? err.code : 'INTERNAL';
  const message = err instanceof Error ? err.message : String(err);
  const detail = clip(`${errorCode}: ${message}`);
  const words = wordsOf(err);
  if (/INSTALL_FAILED_TEST_ONLY/.test(words))
    return { detail, errorCode, known: 'test-install-refused', fix: FIX_TEST_ONLY };
  if (/INSTALL_FAILED_USER_RESTRICTED/.test(words))
    return { detail, errorCode, known: 'test-install-refused', fix: FIX_USER_RESTRICTED };
  if (/INJECT_EVENTS/.test(words))
    return { detail, errorCode, known: 'injection-blocked', fix: FIX_INJECTION };
  if (/no active window/.test(words)) return { detail, errorCode, known: 'screen-off', fix: FIX_SCREEN_OFF };
  if (
    id === 'a11y-enable' &&
    isBridgeError(err) &&
    err.code === 'COMPANION_UNSUPPORTED' &&
    err.details?.['startFailure'] === 'never-bound'
  ) {
    return { detail, errorCode, known: 'a11y-restricted', fix: FIX_A11Y_RESTRICTED };
  }
  return { detail, errorCode, known: 'generic', fix: FIX_GENERIC };
}
