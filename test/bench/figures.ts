/** A bench's figure list (what `bench()` returns to test/bench/run.ts). */
import type { BenchFigure } from './run.ts';

/** A bench's figures and the one way it adds one (values and ratios rounded to `digits`). */
export function figureList(digits = 3) {
  const round = (n: number) => Math.round(n * 10 ** digits) / 10 ** digits;
  const list: BenchFigure[] = [];
  const fig = (
    bench: string,
    value: number,
    unit: string,
    baseline: string | null = null,
    ratio: number | null = null,
  ) => list.push({ bench, value: round(value), unit, baseline, ratio: ratio === null ? null : round(ratio) });
  return { list, fig };
}
