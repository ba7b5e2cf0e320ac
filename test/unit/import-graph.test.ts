/**
 * The shape of the code (issue #11): the HTTP server and the composition root take their device
 * sources as input, so nothing under src/server/ or src/node/ imports the simulator, directly or
 * through another module; routes reach the device side only through the application layer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Relative module specifiers of static imports, re-exports, `import type` and dynamic `import()`. */
function importsOf(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push(m[1]!);
  return found.filter((s) => s.startsWith('.'));
}

const graph = new Map<string, string[]>();
for (const file of sources(SRC)) {
  graph.set(
    file,
    importsOf(readFileSync(file, 'utf8')).map((s) => path.resolve(path.dirname(file), s)),
  );
}

/** Every module `file` reaches, with one path to each. */
function reach(file: string): Map<string, string[]> {
  const seen = new Map<string, string[]>([[file, [file]]]);
  const queue = [file];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of graph.get(at) ?? []) {
      if (seen.has(next)) continue;
      seen.set(next, [...seen.get(at)!, next]);
      queue.push(next);
    }
  }
  return seen;
}

const rel = (f: string) => path.relative(SRC, f);
const under = (dir: string) => [...graph.keys()].filter((f) => rel(f).startsWith(`${dir}/`));

describe('import graph', () => {
  it('the parser finds every kind of import', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      "export { c } from './c.ts';",
      "export * from './d.ts';",
      "const { e } = await import('../e.ts');",
      "import x from 'node:fs';",
      "import './side-effect.ts';",
    ].join('\n');
    expect(importsOf(text)).toEqual(['./a.ts', '../b.ts', './c.ts', './d.ts', './side-effect.ts', '../e.ts']);
  });

  for (const dir of ['server', 'node', 'app']) {
    it(`nothing under src/${dir}/ reaches src/simulator/, directly or transitively`, () => {
      const files = under(dir);
      expect(files.length).toBeGreaterThan(0);
      const offending: string[] = [];
      for (const file of files) {
        for (const [target, via] of reach(file)) {
          if (rel(target).startsWith('simulator/')) offending.push(via.map(rel).join(' -> '));
        }
      }
      expect(offending).toEqual([]);
    });
  }

  it('the check would catch a simulator import (the CLI does import it)', () => {
    const cli = path.join(SRC, 'cli/simulated-devices.ts');
    expect([...reach(cli).keys()].some((f) => rel(f).startsWith('simulator/'))).toBe(true);
  });

  it('routes reach the lease manager, the registry and the lease operations only through src/app/', () => {
    const direct = under('server/routes').flatMap((file) =>
      (graph.get(file) ?? [])
        .map(rel)
        .filter((t) =>
          ['leases/manager.ts', 'devices/registry.ts', 'helpers/lease-operations.ts'].includes(t),
        )
        .map((t) => `${rel(file)} -> ${t}`),
    );
    expect(direct).toEqual([]);
  });
});
