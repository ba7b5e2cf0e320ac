import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SnapshotView } from '../../src/app/helper-views.ts';
import { snapshotViewJson, streamedSnapshotView } from '../../src/app/snapshot-stream.ts';
import { generateUiXml } from '../../src/simulator/helper/index.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { buildLargeDump } from '../fixtures/instrumentation/large-dump.ts';

const dir = new URL('../fixtures/uiautomator/', import.meta.url);
const corpus = readdirSync(dir)
  .filter((f) => f.endsWith('.xml'))
  .sort()
  .map((f) => readFileSync(new URL(f, dir), 'utf8'));

const fields = {
  transport: 'session',
  elapsedMs: 12,
  deadlineMs: 30000,
  attempts: 1,
  helperElapsedMs: null,
  waitForIdleTimeoutMs: 500,
  nodeCount: 3,
  truncated: false,
  windowCount: 1,
  captureMode: 'interactive-windows',
};
const jsonView = (xml: string) =>
  ({ ...fields, format: 'json', snapshot: normalizeSnapshot(xml) }) as unknown as SnapshotView;
const xmlView = (xml: string) => ({ ...fields, format: 'xml', xml }) as unknown as SnapshotView;

async function body(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const piece of stream as unknown as AsyncIterable<Uint8Array>) parts.push(Buffer.from(piece));
  return Buffer.concat(parts);
}

describe('streamed snapshot answers', () => {
  it('are byte-identical to JSON.stringify for the 20 corpus dumps and large dumps, both formats', async () => {
    for (const xml of [...corpus, buildLargeDump(5000), generateUiXml(20000, 3)]) {
      for (const view of [jsonView(xml), xmlView(xml)]) {
        const stream = streamedSnapshotView(view, 0);
        if (stream === null) throw new Error('not streamed');
        const bytes = await body(stream);
        expect(bytes.equals(Buffer.from(JSON.stringify(view), 'utf8'))).toBe(true);
      }
    }
  });

  it('small answers are not streamed (one string as before)', () => {
    expect(streamedSnapshotView(xmlView(corpus[0] as string))).toBeNull();
    expect(streamedSnapshotView(jsonView(generateUiXml(5000, 1)))).not.toBeNull();
  });

  it('property: any XML text (surrogate pairs, lone surrogates, escapes at piece boundaries) and generated trees stream byte-identically', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({
          unit: fc.constantFrom('a', '😀', '\ud800', '\udc00', '"', '\\', '\n', '\u0001', 'é', '<'),
          maxLength: 40,
        }),
        fc.integer({ min: 65_000, max: 66_000 }),
        fc.integer({ min: 1, max: 300 }),
        async (tail, pad, nodes) => {
          const xml = 'x'.repeat(pad) + tail + 'y'.repeat(pad);
          const view = xmlView(xml);
          expect(
            (await body(streamedSnapshotView(view, 0) as ReadableStream<Uint8Array>)).equals(
              Buffer.from(JSON.stringify(view)),
            ),
          ).toBe(true);
          const tree = jsonView(generateUiXml(nodes, pad));
          expect([...snapshotViewJson(tree)].join('')).toBe(JSON.stringify(tree));
        },
      ),
      { numRuns: 60 },
    );
  });
});
