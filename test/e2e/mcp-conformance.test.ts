/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`) against `/mcp` of a served bridge
 * (loopback, no tokens): the scenarios a server of tools must pass — initialize, ping, tools/list and
 * the DNS-rebinding protection (a Host or Origin that is not loopback is refused). The others test
 * features this server does not offer (resources, prompts, sampling, the suite's own test tools).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { runProcess } from '../support/cli.ts';
import { type ServeNode, startServeNode, stopBridge } from '../support/fleet.ts';

const CONFORMANCE = path.resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/conformance/dist/index.js',
);
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

let node: ServeNode;
let tmp: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  tmp = await tempDir();
  node = await startServeNode({ dataDir: tmp.dir, redisUrl: null, simulate: 0 });
}, 60_000);

afterAll(async () => {
  if (node) await stopBridge(node);
  await tmp?.cleanup();
});

describe('MCP conformance suite against /mcp', () => {
  for (const scenario of SCENARIOS) {
    it(scenario, async () => {
      const run = await runProcess(
        process.execPath,
        [CONFORMANCE, 'server', '--url', `${node.url}/mcp`, '--scenario', scenario],
        {
          cwd: tmp.dir,
          timeoutMs: 60_000,
        },
      );
      const report = `${run.stdout}\n${run.stderr}`;
      expect(report, report).toMatch(/Passed: (\d+)\/\1, 0 failed/);
      expect(run.code, report).toBe(0);
    }, 90_000);
  }
});
