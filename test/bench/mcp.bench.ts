/**
 * mcp-snapshot-bytes-ratio: bytes of the MCP `snapshot` tool's compact text (every node the
 * normalized tree keeps: includeHidden) over bytes of the uiautomator XML, summed over the 20
 * corpus dumps (test/fixtures/uiautomator, the shared corpus's copy; goal ≤ 0.15). baseline: the XML itself.
 * mcp-tap-roundtrip-ms-p50 / -p95: one `tap` by ref through `/mcp` (the SDK's Streamable HTTP client,
 * a listening bridge, one simulated device), from the call to its result: the stale-ref check's
 * capture plus the gesture. baseline: the API's own tap (`POST /v1/leases/{id}/gestures`) p50/p95.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { renderCompactSnapshot } from '../../src/mcp/compact-snapshot.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { readCorpus } from '../fixtures/instrumentation/large-dump.ts';
import { listenApp, testDeviceBridge } from '../support/bridge.ts';
import type { BenchFigure } from './run.ts';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const round = (n: number) => Number(n.toFixed(2));

/** Tap round trips through /mcp and through the API, interleaved after a warm-up. */
async function tapRoundTrips(rounds: number): Promise<BenchFigure[]> {
  const bridge = await testDeviceBridge({ simulate: 1 });
  const http = await listenApp(bridge.app);
  const transport = new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`));
  const client = new Client({ name: 'mcp-bench', version: '1.0.0' });
  try {
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
      return result;
    };
    const acquired = await call('acquire_device', { waitSeconds: 30 });
    const { leaseId } = acquired.structuredContent as { leaseId: string };
    const text = (await call('snapshot', { leaseId })).content[0] as { text: string };
    const ref = text.text
      .split('\n')
      .find((l) => l.includes('"CANCEL"'))
      ?.split(' ')[0];
    const api = async () => {
      const res = await fetch(`${http.url}/v1/leases/${leaseId}/gestures`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ kind: 'tap', x: 661, y: 1252 }),
      });
      if (!res.ok) throw new Error(`API tap: ${res.status}`);
      await res.arrayBuffer();
    };
    const viaMcp: number[] = [];
    const viaApi: number[] = [];
    for (let i = 0; i < rounds + 5; i++) {
      let t = performance.now();
      await call('tap', { leaseId, ref });
      const mcp = performance.now() - t;
      t = performance.now();
      await api();
      if (i >= 5) {
        viaMcp.push(mcp);
        viaApi.push(performance.now() - t);
      }
    }
    await call('release_device', { leaseId });
    const figure = (p: number): BenchFigure => {
      const value = round(percentile(viaMcp, p));
      const base = percentile(viaApi, p);
      return {
        bench: `mcp-tap-roundtrip-ms-p${p}`,
        value,
        unit: 'ms',
        baseline: `api-tap-ms-p${p}`,
        ratio: round(value / base),
      };
    };
    return [figure(50), figure(95)];
  } finally {
    await client.close();
    await http.close();
    await bridge.cleanup();
  }
}

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
    ...(await tapRoundTrips(Number(process.env['MCP_TAP_ROUNDS'] ?? 50))),
  ];
}
