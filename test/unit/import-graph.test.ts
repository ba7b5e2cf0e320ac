/**
 * The shape of the code (issue #11): the HTTP server and the composition root take their device
 * sources as input, so nothing under src/server/ or src/node/ imports the simulator, directly or
 * through another module; routes reach the device side only through the application layer.
 * No folder and no file of src/ is part of an import cycle (`import type` counts: a type is a
 * dependency too), and the folders stand on floors (LAYERS): an import goes down or sideways, never up.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sources } from '../support/sources.ts';

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

/** A folder is the first path segment under src/; a file at the top of src/ is its own node. */
const folderOf = (file: string) => rel(file).split(path.sep)[0]!;

/** The folder graph: one edge per pair of distinct folders, with the file imports behind it. */
function folderGraph(): Map<string, Map<string, string[]>> {
  const folders = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (!folders.has(from)) folders.set(from, new Map());
    for (const target of targets) {
      const to = folderOf(target);
      if (to === from) continue;
      const edges = folders.get(from)!;
      edges.set(to, [...(edges.get(to) ?? []), `${rel(file)} -> ${rel(target)}`]);
    }
  }
  return folders;
}

/** The strongly connected components of more than one node (Tarjan), each sorted, in a stable order. */
function cycles(nodes: Map<string, Iterable<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of nodes.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...nodes.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** A cycle for people: its members, then every edge inside it with (the first few) imports behind it. */
function describeCycle(members: string[], edges: (from: string) => Map<string, string[]>): string {
  const lines = [`cycle: ${members.join(' <-> ')}`];
  for (const from of members) {
    for (const [to, via] of edges(from)) {
      if (!members.includes(to)) continue;
      const shown = via.slice(0, 3).map((v) => `      ${v}`);
      if (via.length > 3) shown.push(`      … and ${via.length - 3} more`);
      lines.push(`  ${from} -> ${to}`, ...shown);
    }
  }
  return lines.join('\n');
}

/**
 * The floors of src/, bottom to top: a module imports from its own floor or below, never above.
 * A folder is the first path segment under src/; a file at the top of src/ is its own node.
 */
const LAYERS: readonly (readonly string[])[] = [
  // Pure foundations, no I/O of their own: the error type, value rendering, strict JSON and the
  // decoding of stored records with it, the version, the periodic-task helper, the per-turn work budget, logging and metrics,
  // and snapshot normalisation (XML -> JSON tree).
  [
    'errors.ts',
    'describe-value.ts',
    'strict-json.ts',
    'stored-record.ts',
    'version.ts',
    'periodic.ts',
    'event-loop-turns.ts',
    'observability',
    'snapshot',
  ],
  // The protocol floor: pure codecs both the bridge and the simulator speak (adb transport messages,
  // host protocol, shell v2 and sync framing, endpoints; the helper protocol; glass line framing;
  // APK and dex readers; Android names). It stands on the pure basics alone (see the test below).
  ['protocol'],
  // The adapters to external systems that everything else reaches through small interfaces: adbkit
  // and the adb server and device connections, ioredis.
  ['adb', 'redis'],
  // The one configuration schema over env and flags (it validates endpoints with the protocol's parsers).
  ['config.ts'],
  // Stored things and who may touch them: bearer tokens and console sessions, release manifests and
  // their validation, the artifact stores and APK files.
  ['auth', 'manifest', 'artifacts'],
  // Publishing and reading helper releases (manifests + artifacts).
  ['releases'],
  // The devices a node drives: records, stores, probes, the registry, the device selector.
  ['devices'],
  // Exclusive, fenced use of a device: lease stores, the manager, waiters, teardowns.
  ['leases'],
  // The on-device helpers and companions: the snapshot driver, glass connections, farm operations,
  // the device reset (their codecs are in protocol/).
  ['helpers'],
  // The lease-session room: what a lease does on its device (helpers, glass, farm, adb endpoint) and its teardown.
  ['lease-session'],
  // The HTTP contract: zod request/response schemas shared by the routes, the app layer and clients.
  ['api'],
  // The application layer: one service method per use case, called by routes and the CLI alike.
  ['app'],
  // Clients of the HTTP contract: the typed client (devicebridge/client), the console's assets
  // and browser script, and the MCP tools for AI agents (over the typed client).
  ['client', 'console', 'mcp'],
  // The HTTP server: middleware, one route file per resource (the console's pages too), the app.
  ['server'],
  // The composition root: builds a node from config, taking its device sources as input.
  ['node'],
  // The device simulator: a device source in software, above everything that serves so that only
  // the entry points can hand it in.
  ['simulator'],
  // Entry points: the CLI and the library's public surface (src/index.ts).
  ['cli', 'index.ts'],
];

const floorOf = (node: string, layers = LAYERS) => layers.findIndex((layer) => layer.includes(node));

/** Every folder edge that goes up a floor of `layers`, each followed by the imports behind it. */
function upwardImports(layers: readonly (readonly string[])[]): string[] {
  const upward: string[] = [];
  for (const [from, edges] of folderGraph()) {
    for (const [to, via] of edges) {
      const [below, above] = [floorOf(from, layers), floorOf(to, layers)];
      if (above > below)
        upward.push(`${from} (floor ${below}) -> ${to} (floor ${above})`, ...via.map((v) => `    ${v}`));
    }
  }
  return upward;
}

const under = (dir: string) => [...graph.keys()].filter((f) => rel(f).startsWith(`${dir}/`));

/** The pure basics at the top of src/: what the protocol floor may stand on. */
const PURE_BASICS = ['errors.ts', 'strict-json.ts', 'describe-value.ts'];

/**
 * What the simulator may reach, directly or through another module: itself, the protocol floor, the
 * snapshot normalisation (pure: XML values) and the pure basics. Nothing host-side — not adb/,
 * helpers/, artifacts/, leases/, devices/, app/, api/, server/, node/, releases/, redis/, auth/ nor
 * config.ts — so what the simulator shares with the bridge is pure codecs alone, and it stays a
 * device in software. manifest/ is host-side too (it checks APK URLs through
 * config.ts): the Android names the simulator needs (component names, the accessibility-service
 * permission) live in protocol/android/, where manifest/ takes them from as well.
 */
const SIMULATOR_MAY_REACH = (file: string): boolean => {
  const r = rel(file);
  return ['simulator/', 'protocol/', 'snapshot/'].some((dir) => r.startsWith(dir)) || PURE_BASICS.includes(r);
};

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

  it('src/protocol/ imports nothing from another folder of src/, only the pure basics', () => {
    const files = under('protocol');
    expect(files.length).toBeGreaterThan(0);
    const outside = files.flatMap((file) =>
      (graph.get(file) ?? [])
        .map(rel)
        .filter((t) => !t.startsWith('protocol/') && !PURE_BASICS.includes(t))
        .map((t) => `${rel(file)} -> ${t}`),
    );
    expect(outside).toEqual([]);
  });

  it('src/protocol/ does no I/O: no sockets, files, processes or timers', () => {
    const files = under('protocol');
    expect(files.length).toBeGreaterThan(0);
    const io =
      /\bfrom\s+['"]node:(?:net|tls|dgram|http|https|http2|fs|fs\/promises|child_process|worker_threads|timers|timers\/promises)['"]|\bset(?:Timeout|Interval|Immediate)\(/;
    expect(files.filter((file) => io.test(readFileSync(file, 'utf8'))).map(rel)).toEqual([]);
    // The check can fail: the bridge's glass connection opens sockets and sets timers.
    expect(io.test(readFileSync(path.join(SRC, 'helpers/glass/line-client.ts'), 'utf8'))).toBe(true);
  });

  it('src/simulator/ reaches nothing host-side, directly or transitively', () => {
    const files = under('simulator');
    expect(files.length).toBeGreaterThan(0);
    const offending: string[] = [];
    for (const file of files) {
      for (const [target, via] of reach(file)) {
        if (!SIMULATOR_MAY_REACH(target)) offending.push(via.map(rel).join(' -> '));
      }
    }
    expect(offending).toEqual([]);
  });

  it('the simulator check would catch a host-side import', () => {
    const host = path.join(SRC, 'helpers/glass/line-client.ts');
    expect(SIMULATOR_MAY_REACH(host)).toBe(false);
    expect([...reach(host).keys()].some((f) => !SIMULATOR_MAY_REACH(f))).toBe(true);
  });

  it('the check would catch a simulator import (the CLI does import it)', () => {
    const cli = path.join(SRC, 'cli/simulated-devices.ts');
    expect([...reach(cli).keys()].some((f) => rel(f).startsWith('simulator/'))).toBe(true);
  });

  it('routes reach the lease manager and the registry only through src/app/, the lease-session room only through the app layer', () => {
    const direct = under('server/routes').flatMap((file) =>
      (graph.get(file) ?? [])
        .map(rel)
        .filter(
          (t) =>
            ['leases/manager.ts', 'devices/registry.ts'].includes(t) ||
            t.startsWith(`lease-session${path.sep}`),
        )
        .map((t) => `${rel(file)} -> ${t}`),
    );
    expect(direct).toEqual([]);
  });

  it('finds a cycle and only a cycle', () => {
    const nodes = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(cycles(nodes)).toEqual([['a', 'b', 'c']]);
  });

  it('no folder of src/ is part of an import cycle', () => {
    const folders = folderGraph();
    const found = cycles(new Map([...folders].map(([from, edges]) => [from, [...edges.keys()]])));
    const report = found.map((c) => describeCycle(c, (from) => folders.get(from) ?? new Map()));
    expect(report.join('\n\n'), `${found.length} folder cycle(s)`).toBe('');
  });

  it('no file of src/ is part of an import cycle', () => {
    const found = cycles(new Map([...graph].map(([file, targets]) => [rel(file), targets.map(rel)])));
    const report = found.map((c) =>
      describeCycle(c, (from) => {
        const out = new Map<string, string[]>();
        for (const to of graph.get(path.join(SRC, from)) ?? []) out.set(rel(to), []);
        return out;
      }),
    );
    expect(report.join('\n\n'), `${found.length} file cycle(s)`).toBe('');
  });

  it('every folder of src/ and every file at its top stands on exactly one floor', () => {
    const nodes = [...new Set([...graph.keys()].map(folderOf))].sort();
    const placed = LAYERS.flat();
    expect(nodes.filter((n) => floorOf(n) === -1)).toEqual([]);
    expect(placed.filter((n) => placed.indexOf(n) !== placed.lastIndexOf(n))).toEqual([]);
    expect(placed.filter((n) => !nodes.includes(n))).toEqual([]);
  });

  it('no import goes up a floor', () => {
    expect(upwardImports(LAYERS).join('\n'), 'imports from a lower floor to a higher one').toBe('');
  });

  it('the check would catch an upward import (the CLI imports the server: swap their floors)', () => {
    const swapped = LAYERS.map((layer) =>
      layer.includes('cli') ? ['server'] : layer.includes('server') ? ['cli', 'index.ts'] : layer,
    );
    expect(upwardImports(swapped).some((line) => line.startsWith('server (floor'))).toBe(false);
    expect(upwardImports(swapped).some((line) => line.startsWith('cli (floor'))).toBe(true);
  });
});
