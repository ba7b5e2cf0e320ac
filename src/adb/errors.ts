/**
 * adb failure strings and `pm install` failure codes → typed BridgeErrors (codes stable, original text
 * kept in details). Parsing `pm` output is protocol/helper/package-manager.ts's.
 */
import { BridgeError } from '../errors.ts';
import { adbFailureCode } from '../protocol/adb/host-protocol.ts';

export function mapAdbError(err: unknown, context: { serial?: string; operation: string }): BridgeError {
  if (err instanceof BridgeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const details = {
    operation: context.operation,
    ...(context.serial ? { serial: context.serial } : {}),
    adbMessage: message,
  };
  const where = `${context.operation}${context.serial ? ` on ${context.serial}` : ''}`;
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
