/**
 * uiautomator XML → normalized snapshot tree. Pure, no I/O.
 *
 * Two parts: `xml-scanner.ts` reads the uiautomator subset of XML in one pass (well-formedness,
 * the attributes we keep) and reports elements to `tree-builder.ts`, which builds the normalized
 * nodes directly (no generic DOM) and applies the tree semantics: refs, window info, scroll hints,
 * occlusion, hittability. Malformed XML throws `BridgeError('HELPER_PROTOCOL_ERROR')` whose message
 * and `details` name the offset, line and column; nothing else is ever thrown.
 */
import { BridgeError } from '../errors.ts';
import { TreeBuilder } from './tree-builder.ts';
import type { NormalizedSnapshot, NormalizeOptions } from './types.ts';
import { scanUiXml } from './xml-scanner.ts';
import { lineColumn, XmlError } from './xml-values.ts';

export type { Bounds, NormalizedSnapshot, NormalizeOptions, SnapshotNode, WindowInfo } from './types.ts';

/**
 * Normalize one uiautomator dump. Throws `BridgeError('HELPER_PROTOCOL_ERROR')` (details: `reason`,
 * `offset`, `line`, `column`) for malformed XML; never anything else.
 */
export function normalizeSnapshot(xml: string, options: NormalizeOptions = {}): NormalizedSnapshot {
  if (typeof xml !== 'string') {
    throw new BridgeError('HELPER_PROTOCOL_ERROR', 'snapshot XML must be a string', {
      details: { reason: 'not-a-string' },
    });
  }
  try {
    const tree = new TreeBuilder(options.coverageThreshold ?? 0.9, xml.length);
    scanUiXml(xml, tree);
    return tree.result(xml);
  } catch (err) {
    if (err instanceof XmlError) {
      const { line, column } = lineColumn(xml, err.offset);
      throw new BridgeError(
        'HELPER_PROTOCOL_ERROR',
        `invalid uiautomator XML at line ${line} column ${column}: ${err.reason}`,
        { details: { reason: err.reason, offset: err.offset, line, column } },
      );
    }
    if (err instanceof RangeError) {
      // e.g. a hostile document too large for a string/array; report as malformed input.
      throw new BridgeError('HELPER_PROTOCOL_ERROR', `cannot normalize snapshot XML: ${err.message}`, {
        details: { reason: 'too-large' },
      });
    }
    throw err;
  }
}
