/**
 * Benchmark runner behind `npm run bench` (`node --import tsx test/bench/run.ts [FILTER]`): imports
 * every `test/bench/*.bench.ts`, runs its `bench()` and prints one JSON object per line:
 * {"bench": NAME, "value": N, "unit": U, "baseline": NAME_OR_NULL, "ratio": R_OR_NULL}.
 * FILTER (optional) runs only the bench files whose name contains it (e.g. `normalize`).
 */
import { readdirSync } from 'node:fs';

export interface BenchFigure {
  bench: string;
  value: number;
  unit: string;
  baseline: string | null;
  ratio: number | null;
}

const dir = new URL('./', import.meta.url);
const filter = process.argv[2];
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();
let failures = 0;
for (const file of files) {
  const mod = (await import(new URL(file, dir).href)) as { bench?: () => Promise<BenchFigure[]> };
  if (typeof mod.bench !== 'function') continue;
  if (filter !== undefined && !file.includes(filter)) continue;
  try {
    const figures = await mod.bench();
    for (const figure of figures) process.stdout.write(`${JSON.stringify(figure)}\n`);
  } catch (err) {
    failures++;
    process.stderr.write(
      `bench ${file} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
}
process.exitCode = failures > 0 ? 1 : 0;
