/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`) against `/mcp` of a served bridge
 * (loopback, no tokens): every server scenario that applies to a server of device tools — initialize,
 * ping, tools/list, concurrent POST event streams and the DNS-rebinding protection (a Host or Origin
 * that is not loopback is refused). The others need what this server does not offer (resources,
 * prompts, completions, logging, sampling, elicitation, resumable streams) or call the suite's own
 * test tools (`test_simple_text`, …); docs/mcp.md names each and why. A scenario the suite adds in a
 * new version fails the listing test below until it is run here or named there.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { runProcess } from '../support/cli.ts';
import { type ServeNode, startServeNode, stopBridge } from '../support/fleet.ts';

const CONFORMANCE = path.resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/conformance/dist/index.js',
);
const MCP_DOC = path.resolve(import.meta.dirname, '../../docs/mcp.md');
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];
/** One scenario's bound (it runs in a few seconds). */
const SCENARIO_MS = 30_000;

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
  it('every server scenario of the suite is run here or named in docs/mcp.md as not applicable', async () => {
    const run = await runProcess(process.execPath, [CONFORMANCE, 'list', '--server'], {
      cwd: tmp.dir,
      timeoutMs: SCENARIO_MS,
    });
    expect(run.code, run.stderr).toBe(0);
    const listed = [...run.stdout.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1] as string);
    expect(listed).toEqual(expect.arrayContaining(SCENARIOS));
    const doc = await readFile(MCP_DOC, 'utf8');
    const section = doc.slice(doc.indexOf('## Conformance'));
    expect(section.length).toBeLessThan(doc.length);
    const unaccounted = listed.filter((s) => !SCENARIOS.includes(s) && !section.includes(`\`${s}\``));
    expect(unaccounted).toEqual([]);
    for (const s of SCENARIOS) expect(section, s).toContain(`\`${s}\``);
  });

  for (const scenario of SCENARIOS) {
    it(
      scenario,
      async () => {
        const run = await runProcess(
          process.execPath,
          [CONFORMANCE, 'server', '--url', `${node.url}/mcp`, '--scenario', scenario],
          { cwd: tmp.dir, timeoutMs: SCENARIO_MS },
        );
        const report = `${run.stdout}\n${run.stderr}`;
        expect(report, report).toMatch(/Passed: (\d+)\/\1, 0 failed/);
        expect(run.code, report).toBe(0);
      },
      SCENARIO_MS + 10_000,
    );
  }
});
