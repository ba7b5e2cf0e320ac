/**
 * mcp-snapshot-bytes-ratio: bytes of the MCP `snapshot` tool's compact text (every node the
 * normalized tree keeps: includeHidden) over bytes of the uiautomator XML, summed over the 20
 * corpus dumps (test/fixtures/uiautomator, the shared corpus's copy; goal ≤ 0.15). baseline: the XML itself.
 */
import { renderCompactSnapshot } from '../../src/mcp/compact-snapshot.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { readCorpus } from '../fixtures/instrumentation/large-dump.ts';
import type { BenchFigure } from './run.ts';

export async function bench(): Promise<BenchFigure[]> {
  const corpus = readCorpus();
  if (corpus.length !== 20) throw new Error(`expected the 20 corpus dumps, found ${corpus.length}`);
  let xmlBytes = 0;
  let textBytes = 0;
  for (const { name, xml } of corpus) {
    const tree = normalizeSnapshot(xml);
    const out = renderCompactSnapshot(tree.windows, { includeHidden: true });
    if (out.refs.length !== tree.nodes.length)
      throw new Error(`${name}: ${out.refs.length} of ${tree.nodes.length} nodes`);
    xmlBytes += Buffer.byteLength(xml);
    textBytes += Buffer.byteLength(out.text);
  }
  const ratio = Number((textBytes / xmlBytes).toFixed(4));
  return [
    {
      bench: 'mcp-snapshot-bytes-ratio',
      value: ratio,
      unit: 'ratio',
      baseline: 'uiautomator-xml-bytes',
      ratio,
    },
  ];
}
