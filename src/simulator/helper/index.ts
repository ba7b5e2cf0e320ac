/**
 * Emulated on-device helpers. PLACEHOLDER until the snapshot-helper emulation lands: these exports
 * fix the contract the shell layer calls; every body below is replaced by the real emulation.
 */
import type { ShellCommand, SimDevice } from '../types.ts';

/** `am instrument ARGS...` (argv after `instrument`). Prints `am`'s framing; resolves to the exit code. */
export const amInstrument: ShellCommand = async (_argv, io) => {
  io.stderr('am instrument: helper emulation not available yet\n');
  return 1;
};

/** `am force-stop PKG`: stop any running helper (one-shot or session) of that package. */
export function forceStop(_device: SimDevice, _packageName: string): void {}

/** The built-in realistic screen as uiautomator XML. */
export function builtinScreenXml(): string {
  return '<?xml version=\'1.0\' encoding=\'UTF-8\' standalone=\'yes\' ?><hierarchy rotation="0"></hierarchy>';
}

/** A generated uiautomator XML tree with `nodeCount` nodes (deterministic for a seed). */
export function generateUiXml(_nodeCount: number, _seed = 1): string {
  return builtinScreenXml();
}
