/**
 * The TypeScript examples of the user docs compile against the real client: every ```ts block of
 * docs/client-library.md and docs/getting-started.md, its `devicebridge/client` import pointed at
 * this checkout's src/client, checked by tsc with the project's strict settings. A block that does
 * not construct its own `bridge` or acquire its own `lease` gets them declared (the pages say so).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../support/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PAGES = ['docs/client-library.md', 'docs/getting-started.md'];
const CLIENT = path.join(ROOT, 'src/client/index.ts');

/** The fenced ```ts blocks of a Markdown text. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** One block as a module of its own: the client import resolved, `bridge` and `lease` declared when used. */
function moduleOf(block: string): string {
  const declares = (name: string) => new RegExp(`\\b(?:const|let)\\s+${name}\\b`).test(block);
  const prelude = [`import type * as docsClient from ${JSON.stringify(CLIENT)};`];
  if (!declares('bridge')) prelude.push('declare const bridge: docsClient.DeviceBridgeClient;');
  if (!declares('lease')) prelude.push('declare const lease: docsClient.Lease;');
  const body = block.replaceAll("from 'devicebridge/client'", `from ${JSON.stringify(CLIENT)}`);
  return `${prelude.join('\n')}\n${body}\nexport {};\n`;
}

describe('the docs’ TypeScript examples', () => {
  it('finds the blocks', async () => {
    for (const page of PAGES) {
      const blocks = tsBlocks(await readFile(path.join(ROOT, page), 'utf8'));
      expect(blocks.length, page).toBeGreaterThan(0);
    }
  });

  it('compile against src/client with the project’s strict settings', async () => {
    // Under the checkout (.tmp/ is ignored by git) so that tsc finds node_modules and @types/node.
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(ROOT, '.tmp', 'docs-examples-'));
    try {
      const files: string[] = [];
      for (const page of PAGES) {
        const blocks = tsBlocks(await readFile(path.join(ROOT, page), 'utf8'));
        for (const [i, block] of blocks.entries()) {
          const file = `${path.basename(page, '.md')}-${i + 1}.mts`;
          await writeFile(path.join(dir, file), moduleOf(block));
          files.push(file);
        }
      }
      await writeFile(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          extends: path.join(ROOT, 'tsconfig.json'),
          compilerOptions: { incremental: false, noEmit: true },
          include: [],
          files,
        }),
      );
      const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
      const run = await runProcess(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], {
        cwd: dir,
        timeoutMs: 110_000,
      });
      // tsc names the file (page and block number) and the line of each error.
      expect(`${run.stdout}${run.stderr}`).toBe('');
      expect(run.code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
