/** The simulated helper reuses the chunk records' text for an unchanged screen, never across faults. */
import { describe, expect, it } from 'vitest';
import { chunkOutput, chunkRecords } from '../../src/simulator/helper/helper-core.ts';
import { generateUiXml } from '../../src/simulator/helper/index.ts';
import type { SimDevice } from '../../src/simulator/types.ts';

const device = (chunk?: { index: number; action: 'drop' | 'duplicate' | 'corrupt' }) =>
  ({ random: () => 0.5, faults: chunk === undefined ? {} : { chunk } }) as unknown as SimDevice;

describe('chunkOutput', () => {
  it('is the chunk records joined, the same text again for the same bytes, and follows a chunk fault', () => {
    const bytes = Buffer.from(generateUiXml(60, 1));
    const clean = device();
    const first = chunkOutput(clean, bytes);
    expect(first).toBe(chunkRecords(clean, bytes).join(''));
    expect(chunkOutput(clean, bytes)).toBe(first);
    for (const action of ['drop', 'duplicate', 'corrupt'] as const) {
      const faulty = device({ index: 1, action });
      const out = chunkOutput(faulty, bytes);
      expect(out, action).toBe(chunkRecords(faulty, bytes).join(''));
      expect(out, action).not.toBe(first);
    }
    const other = Buffer.from(generateUiXml(61, 1));
    expect(chunkOutput(clean, other)).toBe(chunkRecords(clean, other).join(''));
  });
});
