/** A JSON answer written a piece at a time (src/server/json-pieces.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPieceStream, jsonPieces } from '../../src/server/json-pieces.ts';

const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  // Mostly text, with multi-byte characters that piece boundaries cut through.
  fc.string({ unit: 'grapheme', maxLength: 80 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
);

describe('jsonPieces', () => {
  it('property: parses to what JSON.stringify of the decoded fields gives, whatever the piece size', () => {
    fc.assert(
      fc.property(
        bytes,
        bytes,
        fc.integer({ min: 1, max: 64 }),
        fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
        (out, err, pieceBytes, exitCode) => {
          const stdout = Buffer.from(out);
          const stderr = Buffer.from(err);
          const text = [
            ...jsonPieces({ exitCode, stdout, stderr, truncated: false, durationMs: 3 }, pieceBytes),
          ].join('');
          expect(text).toBe(
            JSON.stringify({
              exitCode,
              stdout: stdout.toString('utf8'),
              stderr: stderr.toString('utf8'),
              truncated: false,
              durationMs: 3,
            }),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never decodes more than one piece of a field at a time', () => {
    const big = Buffer.alloc(1024 * 1024, 'y\n');
    const pieces = [...jsonPieces({ stdout: big }, 64 * 1024)];
    // 16 pieces of data, then the closing quote and brace.
    expect(pieces.length).toBeGreaterThanOrEqual(17);
    // Each piece holds at most one piece's bytes, escaped ("\n" is 2 characters) plus the key.
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(2 * 64 * 1024 + 16);
    expect(JSON.parse(pieces.join('')).stdout).toBe(big.toString('utf8'));
  });

  it('an empty object is {}', () => {
    expect([...jsonPieces({})].join('')).toBe('{}');
  });
});

describe('jsonPieceStream', () => {
  it('is pulled a piece at a time and reads back to the same JSON', async () => {
    const stdout = Buffer.from('héllo wörld ✓ '.repeat(5000), 'utf8');
    const stream = jsonPieceStream({ exitCode: 0, stdout, truncated: false }, 1000);
    const reader = stream.getReader();
    const chunks: Uint8Array[] = [];
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(next.value);
    }
    expect(chunks.length).toBeGreaterThan(stdout.length / 1000);
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toEqual({
      exitCode: 0,
      stdout: stdout.toString('utf8'),
      truncated: false,
    });
  });
});
