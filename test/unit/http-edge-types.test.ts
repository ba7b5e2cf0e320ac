/**
 * The HTTP edge is typed through its framework: the contract (src/api) and the server (src/server)
 * hold no `as never` and no `as unknown as`, the casts that silence a handler whose answer does not
 * fit its route (a streamed body, a forwarded answer, pre-written JSON) instead of typing it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sources } from '../support/sources.ts';

const ESCAPE_CASTS = /\bas\s+never\b|\bas\s+unknown\s+as\b/;

/** `line: text` of every line of `text` that casts through `never` or `unknown`. */
function escapeCasts(text: string): string[] {
  return text.split('\n').flatMap((line, i) => (ESCAPE_CASTS.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('the typed HTTP edge', () => {
  it('the scan finds both casts', () => {
    const text = [
      'return c.body(stream, 200) as never;',
      'const ok = value as Response;',
      'return answer as unknown as ReturnType<typeof c.json>;',
    ].join('\n');
    expect(escapeCasts(text)).toEqual([
      '1: return c.body(stream, 200) as never;',
      '3: return answer as unknown as ReturnType<typeof c.json>;',
    ]);
  });

  for (const dir of ['server', 'api']) {
    it(`nothing under src/${dir}/ casts through never or unknown`, () => {
      const files = sources(path.join(SRC, dir));
      expect(files.length).toBeGreaterThan(0);
      const found = files.flatMap((file) =>
        escapeCasts(readFileSync(file, 'utf8')).map((hit) => `${path.relative(SRC, file)}:${hit}`),
      );
      expect(found).toEqual([]);
    });
  }
});
