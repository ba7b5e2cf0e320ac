/**
 * What Android's package manager prints, parsed (pure): `pm install` results, installed
 * versionCodes (`cmd package list packages --show-versioncode`, `dumpsys package`), `pm path` and
 * `sha256sum` output. The ensure step (src/helpers/snapshot/ensure-helper.ts) runs the commands; these
 * functions only read their text, and never throw on any input.
 */

export type PmInstallResult = { ok: true } | { ok: false; code: string; message: string };

/**
 * Parse `pm install` / `cmd package install` output: `Success`, or `Failure [CODE: message]`
 * (also `Failure [CODE]`, and `Error: ...` from old pm). Unknown output is a failure with code
 * `INSTALL_FAILED_UNKNOWN_OUTPUT`.
 */
export function parsePmInstallOutput(output: string): PmInstallResult {
  if (/^Success\s*$/m.test(output)) return { ok: true };
  const failure = /Failure \[([A-Z][A-Z0-9_]*)(?::\s*([^\]\r\n]*))?\]/.exec(output);
  if (failure) return { ok: false, code: failure[1]!, message: (failure[2] ?? '').trim() };
  const error = /^(?:Error|Exception occurred while executing)[:\s]+(.*)$/m.exec(output);
  if (error) return { ok: false, code: 'INSTALL_FAILED_INTERNAL_ERROR', message: error[1]!.trim() };
  return { ok: false, code: 'INSTALL_FAILED_UNKNOWN_OUTPUT', message: output.trim().slice(0, 500) };
}

/** Install failures that a retry after uninstall may fix (only with a policy that allows it). */
export const REINSTALLABLE_FAILURES = new Set([
  'INSTALL_FAILED_UPDATE_INCOMPATIBLE',
  'INSTALL_FAILED_VERSION_DOWNGRADE',
]);

/** `package:NAME versionCode:N` lines → the versionCode of exactly `pkg`, or null. */
export function parseListPackagesVersion(output: string, pkg: string): number | null {
  for (const line of output.split('\n')) {
    const m = /^package:(\S+)\s+versionCode:(\d+)/.exec(line.trim());
    if (m && m[1] === pkg) return Number(m[2]);
  }
  return null;
}

/** `dumpsys package PKG` → `versionCode=N` of the package section, or null. */
export function parseDumpsysVersion(output: string, pkg: string): number | null {
  const section = output.indexOf(`Package [${pkg}]`);
  if (section < 0) return null;
  const m = /versionCode=(\d+)/.exec(output.slice(section));
  return m ? Number(m[1]) : null;
}

/** `pm path PKG` → the path of its (base) APK (`package:/data/app/.../base.apk`), or null. */
export function parsePmPath(output: string): string | null {
  return /^package:(\S+\.apk)\s*$/m.exec(output)?.[1] ?? null;
}

/** `sha256sum FILE` → the lower-case hex digest at the start of its output, or null. */
export function parseSha256sum(output: string): string | null {
  return /^([0-9a-f]{64})\s/.exec(output)?.[1] ?? null;
}
