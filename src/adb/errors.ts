/** adb and `pm` failure strings → typed BridgeErrors (codes stable, original text kept in details). */
import { BridgeError } from '../errors.ts';
import { adbFailureCode } from './host-protocol.ts';

export function mapAdbError(err: unknown, context: { serial?: string; operation: string }): BridgeError {
  if (err instanceof BridgeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const details = {
    operation: context.operation,
    ...(context.serial ? { serial: context.serial } : {}),
    adbMessage: message,
  };
  const where = `${context.operation}${context.serial ? ` on ${context.serial}` : ''}`;
  if (message.includes('devicebridge-never-starts-adb')) {
    // adbkit found no server and tried to start one (client.ts NO_AUTOSTART_BIN): only the bridge's
    // server manager starts adb.
    return new BridgeError('UNAVAILABLE', `${where}: adb server unreachable (not running)`, { details });
  }
  const { code, reason } = adbFailureCode(message);
  switch (code) {
    case 'UNAUTHORIZED_DEVICE':
      return new BridgeError(code, `${where}: ${reason}: accept the debugging prompt or the adb key`, {
        details,
      });
    case 'TIMEOUT':
      return new BridgeError(code, `${where}: ${reason}`, { details });
    case 'INTERNAL':
      return new BridgeError(code, `${where}: ${message}`, { details, retryable: false });
    default:
      return new BridgeError(code, `${where}: ${reason} (${message})`, { details });
  }
}

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

export function installFailedError(
  result: { code: string; message: string },
  serial: string,
  pkg: string,
): BridgeError {
  const retryable =
    result.code === 'INSTALL_FAILED_INSUFFICIENT_STORAGE' || result.code === 'INSTALL_FAILED_INTERNAL_ERROR';
  return new BridgeError(
    'HELPER_INSTALL_FAILED',
    `installing ${pkg} on ${serial} failed: ${result.code}${result.message ? `: ${result.message}` : ''}`,
    {
      retryable,
      details: { failureCode: result.code, failureMessage: result.message, serial, packageName: pkg },
    },
  );
}
