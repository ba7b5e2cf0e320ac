import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { decodeCleanBase64, SnapshotOutputDecoder } from '../../src/protocol/helper/chunk-stream.ts';
import {
  interpretSnapshotResult,
  interpretStreamedSnapshot,
  type SnapshotRunResult,
} from '../../src/protocol/helper/chunks.ts';
import { parseInstrumentationOutput } from '../../src/protocol/helper/instrumentation-output.ts';
import {
  chunkRecords,
  resultLines,
  snapshotOutput,
  snapshotResultFields,
  statusLines,
} from '../fixtures/instrumentation/build.ts';

const corpusDir = new URL('../fixtures/uiautomator/', import.meta.url);
const corpus = readdirSync(corpusDir)
  .filter((f) => f.endsWith('.xml'))
  .sort()
  .map((f) => readFileSync(new URL(f, corpusDir), 'utf8'));

type Mode = 'snapshot' | 'viewport' | 'gesture' | undefined;

function summary(r: SnapshotRunResult) {
  if (r.ok) return r;
  return {
    ok: false,
    code: r.error.code,
    message: r.error.message,
    details: r.error.details,
    retry: r.error.retryable,
  };
}

/** The whole-text answer. */
function whole(bytes: Buffer, mode: Mode) {
  return summary(
    interpretSnapshotResult(parseInstrumentationOutput(bytes.toString('utf8')), mode ? { mode } : {}),
  );
}

/** The streamed answer for `bytes` pushed in pieces cut at `cuts`. */
function streamed(bytes: Buffer, cuts: number[], mode: Mode) {
  const decoder = new SnapshotOutputDecoder();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    const to = Math.min(cut, bytes.length);
    if (to < at) continue;
    decoder.push(bytes.subarray(at, to));
    at = to;
  }
  decoder.push(bytes.subarray(at));
  return summary(interpretStreamedSnapshot(decoder.end(), mode ? { mode } : {}));
}

const cutsArb = fc.array(fc.nat({ max: 20_000 }), { maxLength: 12 });

describe('decodeCleanBase64', () => {
  it('property: clean base64 decodes to what Buffer gives; anything else is refused or agrees', () => {
    const alphabet = fc.constantFrom(
      ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_= \n.'.split(''),
    );
    const textArb = fc.oneof(
      fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('base64')),
      fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('base64url')),
      fc.string({ unit: alphabet, maxLength: 40 }),
    );
    fc.assert(
      fc.property(textArb, (text) => {
        const src = Buffer.from(text, 'latin1');
        const out = Buffer.alloc(text.length);
        const n = decodeCleanBase64(src, 0, src.length, out, 0);
        const expected =
          text.length % 4 === 0
            ? (text.length / 4) * 3 - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0)
            : -1;
        const ref = Buffer.alloc(Math.max(expected, 0));
        const written = expected > 0 ? ref.write(text, 0, expected, 'base64') : 0;
        if (n >= 0) {
          // Clean text: exactly Node's bytes, and Node agrees it is complete.
          expect(written).toBe(expected);
          expect(out.subarray(0, n)).toEqual(ref);
        } else if (text.length > 0 && expected >= 0 && /^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) {
          throw new Error(`clean text refused: ${text}`);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('SnapshotOutputDecoder', () => {
  it('decodes the 20 corpus dumps (one chunk size each) to the whole-text answer for any split', () => {
    for (const [i, xml] of corpus.entries()) {
      const bytes = Buffer.from(
        snapshotOutput(xml, { chunkSize: [2048, 3000, 100, 777][i % 4] as number, crlf: i % 3 === 0 }),
      );
      const reference = whole(bytes, 'snapshot');
      expect(reference).toMatchObject({ ok: true, xml });
      fc.assert(
        fc.property(cutsArb, (cuts) => {
          expect(streamed(bytes, cuts, 'snapshot')).toEqual(reference);
        }),
        { numRuns: 8 },
      );
    }
  });

  it('property: mutated outputs (order, duplicates, gaps, dirty base64, continuations, CRLF, noise, truncation) agree with the whole-text parse for every split', () => {
    const payloadMutation = fc.oneof(
      { weight: 6, arbitrary: fc.constant((p: string) => p) },
      fc.constant((p: string) => p.replace(/\+/g, '-').replace(/\//g, '_')),
      fc.constant((p: string) => `${p.slice(0, 4)}=${p.slice(5)}`),
      fc.constant((p: string) => `${p} `),
      fc.constant((p: string) => p.slice(0, -1)),
      fc.constant((p: string) => `${p}\nQUJD`),
      fc.constant((p: string) => `${p}\n`),
      fc.constant((p: string) => `${p}\nINSTRUMENTATION_STATUS: payloadBase64=QUJD`),
      fc.constant((p: string) => `${p}\r`),
      fc.constant((p: string) => p.replace(/=/g, '')),
      fc.constant(() => ''),
      fc.constant((p: string) => `${p}ü`),
    );
    const recordMutation = fc.oneof(
      { weight: 8, arbitrary: fc.constant((r: Record<string, string>) => r) },
      fc.constant((r: Record<string, string>) => ({ ...r, chunkCount: String(Number(r['chunkCount']) + 1) })),
      fc.constant((r: Record<string, string>) => ({ ...r, chunkIndex: '-1' })),
      fc.constant((r: Record<string, string>) => ({ ...r, outputFormat: 'other' })),
      fc.constant((r: Record<string, string>) => {
        const { payloadBase64: _p, ...rest } = r;
        return rest;
      }),
      fc.constant((r: Record<string, string>) => {
        // payload first, chunk fields after it
        const { payloadBase64, ...rest } = r;
        return { payloadBase64: payloadBase64 as string, ...rest };
      }),
      fc.constant((r: Record<string, string>) => ({ ...r, Error: 'boom' })),
    );
    const xmlArb = fc.oneof(
      fc.constantFrom(...corpus.slice(0, 6)),
      fc.string({ unit: 'grapheme', maxLength: 120 }).map((s) => `<hierarchy rotation="0">${s}</hierarchy>`),
      fc.string({ maxLength: 60 }),
    );
    const arb = fc.record({
      xml: xmlArb,
      size: fc.integer({ min: 1, max: 3000 }),
      order: fc.array(fc.nat(), { maxLength: 6 }),
      dup: fc.option(fc.nat(), { nil: undefined }),
      drop: fc.option(fc.nat(), { nil: undefined }),
      payloads: fc.array(fc.tuple(fc.nat(), payloadMutation), { maxLength: 3 }),
      records: fc.array(fc.tuple(fc.nat(), recordMutation), { maxLength: 2 }),
      crlf: fc.boolean(),
      noise: fc.array(
        fc.tuple(
          fc.nat(),
          fc.constantFrom(
            'noise ü line',
            'INSTRUMENTATION_STATUS_CODE: x',
            '',
            'onError: commandError=true message=x',
            'INSTRUMENTATION_STATUS: payloadBase64',
          ),
        ),
        { maxLength: 3 },
      ),
      after: fc.boolean(),
      truncate: fc.option(fc.nat(), { nil: undefined }),
      noEnd: fc.boolean(),
      mode: fc.constantFrom<Mode>('snapshot', undefined, 'viewport'),
      cuts: cutsArb,
    });
    fc.assert(
      fc.property(arb, (c) => {
        let records = chunkRecords(c.xml, c.size);
        for (const o of c.order) {
          if (records.length < 2) break;
          const i = o % records.length;
          const j = (o >> 3) % records.length;
          [records[i], records[j]] = [
            records[j] as Record<string, string>,
            records[i] as Record<string, string>,
          ];
        }
        if (c.dup !== undefined)
          records.splice(
            c.dup % (records.length + 1),
            0,
            records[c.dup % records.length] as Record<string, string>,
          );
        if (c.drop !== undefined && records.length > 1) records.splice(c.drop % records.length, 1);
        records = records.map((r) => ({ ...r }));
        for (const [at, f] of c.payloads) {
          const r = records[at % records.length] as Record<string, string>;
          if (r['payloadBase64'] !== undefined) r['payloadBase64'] = f(r['payloadBase64']);
        }
        for (const [at, f] of c.records)
          records[at % records.length] = f(records[at % records.length] as Record<string, string>);
        const lines = [
          ...records.flatMap((r) => statusLines(r)),
          ...resultLines(snapshotResultFields(c.xml, 1)),
        ];
        if (c.after) lines.push(...statusLines(chunkRecords('<hierarchy/>')[0] as Record<string, string>));
        for (const [at, line] of c.noise) lines.splice(at % (lines.length + 1), 0, line);
        let text = lines.join('\n') + (c.noEnd ? '' : '\n');
        if (c.crlf) text = text.replace(/\n/g, '\r\n');
        let bytes = Buffer.from(text);
        if (c.truncate !== undefined) bytes = bytes.subarray(0, c.truncate % (bytes.length + 1));
        expect(streamed(bytes, c.cuts, c.mode)).toEqual(whole(bytes, c.mode));
      }),
      { numRuns: 1500 },
    );
  });

  it('property: arbitrary bytes (including payload-prefixed garbage) agree with the whole-text parse', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        'INSTRUMENTATION_STATUS: payloadBase64=',
        'INSTRUMENTATION_STATUS: ',
        'INSTRUMENTATION_STATUS_CODE: 1\n',
        'INSTRUMENTATION_CODE: -1\n',
        'agentDeviceProtocol=android-snapshot-helper-v1\n',
        'outputFormat=uiautomator-xml\n',
        'chunkIndex=0\n',
        'chunkCount=1\n',
        'PGhpZXJhcmNoeS8+\n',
        'QUJD',
        '\n',
        '\r\n',
        '=',
      ),
      fc.string({ maxLength: 8 }),
      fc.uint8Array({ maxLength: 6 }).map((b) => Buffer.from(b).toString('latin1')),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 40 }),
        cutsArb.map((c) => c.map((n) => n % 400)),
        (pieces, cuts) => {
          const bytes = Buffer.from(pieces.join(''), 'utf8');
          expect(streamed(bytes, cuts, 'snapshot')).toEqual(whole(bytes, 'snapshot'));
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe('SnapshotOutputDecoder costs', () => {
  /** A one-chunk snapshot output whose payload line is about `payloadBytes` of base64. */
  function bigOutput(payloadBytes: number): { bytes: Buffer; xml: string } {
    const filler = 'x'.repeat(Math.floor((payloadBytes * 3) / 4) - 200);
    const xml = `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node text="${filler}" /></hierarchy>`;
    return { bytes: Buffer.from(snapshotOutput(xml, { chunkSize: 1 << 30 })), xml };
  }

  function decodeInPieces(bytes: Buffer, piece: number) {
    const decoder = new SnapshotOutputDecoder();
    for (let at = 0; at < bytes.length; at += piece) decoder.push(bytes.subarray(at, at + piece));
    return interpretStreamedSnapshot(decoder.end(), { mode: 'snapshot' });
  }

  it('a 2 MiB payload line pushed in 256-byte pieces costs about what one push does (no re-concatenation per piece)', () => {
    const { bytes, xml } = bigOutput(2 * 1024 * 1024);
    /** Bytes the decode copies with Buffer.concat (a deterministic measure of its work, not a timing). */
    const copied = (piece: number): number => {
      const original = Buffer.concat;
      let total = 0;
      Buffer.concat = ((list: readonly Uint8Array[], length?: number) => {
        const out = original(list, length);
        total += out.length;
        return out;
      }) as typeof Buffer.concat;
      try {
        expect(decodeInPieces(bytes, piece)).toMatchObject({ ok: true, xml });
      } finally {
        Buffer.concat = original;
      }
      return total;
    };
    const whole = copied(bytes.length);
    const pieces = copied(256);
    // ~8200 pushes of a line held in parts; re-concatenating it on every push copied ~4,000× the line.
    expect(pieces, `${pieces} bytes copied in pieces, ${whole} in one push`).toBeLessThan(
      whole + 4 * bytes.length,
    );
  });

  it("a payload line whose '\\n' comes early in the next piece still takes the fast (decoded) path", () => {
    const { bytes } = bigOutput(4096);
    const payloadAt = bytes.indexOf('INSTRUMENTATION_STATUS: payloadBase64=');
    const nl = bytes.indexOf(10, payloadAt);
    for (const cut of [nl, nl - 1, nl - 5]) {
      const decoder = new SnapshotOutputDecoder();
      const tentative = vi.spyOn(decoder.assembler, 'tentative');
      decoder.push(bytes.subarray(0, payloadAt + 10)); // the line starts, is held
      decoder.push(bytes.subarray(payloadAt + 10, cut)); // more of it, no newline yet
      decoder.push(bytes.subarray(cut)); // its '\n' early in this piece
      expect(tentative, `cut ${cut - nl}`).toHaveBeenCalledTimes(1);
      expect(interpretStreamedSnapshot(decoder.end(), { mode: 'snapshot' })).toMatchObject({ ok: true });
    }
  });

  it('a record claiming a huge chunkCount does not make the decoder reserve a buffer for it', () => {
    const record = statusLines({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      outputFormat: 'uiautomator-xml',
      chunkIndex: '0',
      chunkCount: '1000000',
      payloadBase64: Buffer.alloc(64, 65).toString('base64'),
    });
    const bytes = Buffer.from(`${record.join('\n')}\n`);
    const decoders: SnapshotOutputDecoder[] = [];
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 4; i++) {
      const decoder = new SnapshotOutputDecoder();
      decoder.push(bytes);
      decoders.push(decoder); // kept alive: what each reserved stays counted
    }
    const grown = process.memoryUsage().arrayBuffers - before;
    expect(grown, `${(grown / 2 ** 20).toFixed(1)} MiB for 4 decoders`).toBeLessThan(8 * 1024 * 1024);
    const result = interpretStreamedSnapshot(decoders[0]!.end(), { mode: 'snapshot' });
    expect(result.ok).toBe(false); // and the claim is still refused: 999,999 chunks are missing
  });
});

describe('SnapshotOutputDecoder reservation against a hostile device', () => {
  const record = (index: number, count: number, payload: string) =>
    `${statusLines({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      outputFormat: 'uiautomator-xml',
      chunkIndex: String(index),
      chunkCount: String(count),
      payloadBase64: payload,
    }).join('\n')}\n`;

  /** ArrayBuffer bytes held by 4 live decoders fed `feed`. */
  function heldBy(feed: (d: SnapshotOutputDecoder) => void): number {
    const decoders: SnapshotOutputDecoder[] = [];
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 4; i++) {
      const decoder = new SnapshotOutputDecoder();
      feed(decoder);
      decoders.push(decoder);
    }
    const grown = process.memoryUsage().arrayBuffers - before;
    for (const d of decoders) expect(interpretStreamedSnapshot(d.end(), { mode: 'snapshot' }).ok).toBe(false);
    return grown;
  }

  it('noise, refused payloads or a lying chunkCount buy no reservation beyond 16x the valid data', () => {
    const noise = Buffer.from(
      `${'INSTRUMENTATION_STATUS: junk=1\n'.repeat(1)}${'x'.repeat(120)}\n`.repeat(32 * 1024),
    );
    const huge = 30_000_000;
    // 4 MiB of noise lines, then one small record claiming 30M chunks.
    const afterNoise = heldBy((d) => {
      d.push(noise);
      d.push(Buffer.from(record(0, huge, 'QUJD')));
    });
    expect(afterNoise, `${(afterNoise / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(16 * 1024 * 1024);
    // A small record claiming 30M chunks, then a 4 MiB payload that turns out invalid.
    const afterBad = heldBy((d) => {
      d.push(Buffer.from(record(0, huge, 'QUJD')));
      d.push(Buffer.from(record(1, huge, `${'A'.repeat(4 * 1024 * 1024)}!!!!`)));
    });
    expect(afterBad, `${(afterBad / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(48 * 1024 * 1024);
    // Ordinary 2 KiB chunks with a lying chunkCount of 1,000,000 (~6 MiB sent).
    const payload = Buffer.alloc(2048, 66).toString('base64');
    const lying = Buffer.from(Array.from({ length: 2100 }, (_, i) => record(i, 1_000_000, payload)).join(''));
    const afterLie = heldBy((d) => d.push(lying));
    expect(afterLie, `${(afterLie / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(48 * 1024 * 1024);
  });
});

describe('SnapshotOutputDecoder memory', () => {
  /** A 5,000-node-sized document (~1.9 MB, some non-ASCII text). */
  function largeXml(): string {
    const nodes: string[] = [];
    for (let i = 0; i < 5000; i++) {
      nodes.push(
        `<node index="${i % 7}" text="item ${i} ü ${'x'.repeat(i % 40)}" resource-id="com.example:id/row_${i}" class="android.widget.TextView" package="com.example" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,${i}][1080,${i + 40}]" />`,
      );
    }
    return `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node class="android.widget.FrameLayout" package="com.example" bounds="[0,0][1080,2400]">${nodes.join('')}</node></hierarchy>`;
  }

  function pieces(bytes: Buffer, size: number): Buffer[] {
    const out: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += size) out.push(Buffer.from(bytes.subarray(at, at + size)));
    return out;
  }

  /** The output with each record's keys in `am`'s order (sorted, as the real helper's output comes). */
  function sortedOutput(xml: string): string {
    const lines = [
      ...chunkRecords(xml).flatMap((r) =>
        statusLines(Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1)))),
      ),
      ...resultLines(snapshotResultFields(xml, 5001)),
    ];
    return `${lines.join('\n')}\n`;
  }

  it("plain chunk records (am's sorted key order and the fixture's) are read from the bytes, not as record text", () => {
    const xml = largeXml();
    for (const text of [sortedOutput(xml), snapshotOutput(xml)]) {
      const bytes = Buffer.from(text);
      const parts = pieces(bytes, 65536);
      const decoder = new SnapshotOutputDecoder();
      const add = vi.spyOn(decoder.assembler, 'add');
      const addDecoded = vi.spyOn(decoder.assembler, 'addDecoded');
      for (const part of parts) decoder.push(part);
      const chunkCount = Math.ceil(Buffer.byteLength(xml) / 2048);
      // Only a record cut by a piece boundary goes through the text parser.
      expect(add.mock.calls.length).toBeLessThanOrEqual(parts.length);
      expect(addDecoded.mock.calls.length + add.mock.calls.length).toBe(chunkCount);
      expect(summary(interpretStreamedSnapshot(decoder.end(), { mode: 'snapshot' }))).toEqual(
        whole(bytes, 'snapshot'),
      );
    }
  });

  it('a large snapshot fed in 64 KiB pieces allocates its chunk buffer about once (not regrown by doubling)', () => {
    const xml = largeXml();
    const xmlBytes = Buffer.byteLength(xml);
    const parts = pieces(Buffer.from(snapshotOutput(xml)), 65536);
    const decoder = new SnapshotOutputDecoder();
    const before = process.memoryUsage().arrayBuffers;
    for (const part of parts) decoder.push(part);
    const grown = process.memoryUsage().arrayBuffers - before;
    // Doubling from 64 KiB allocated ~2.2× the XML (each outgrown buffer left as garbage).
    expect(grown / xmlBytes, `${grown} B for ${xmlBytes} B of XML`).toBeLessThan(1.3);
    expect(interpretStreamedSnapshot(decoder.end(), { mode: 'snapshot' })).toMatchObject({ ok: true, xml });
  });

  it('before the reservation is allowed the bytes fill segments, copied once (not a doubling buffer)', () => {
    const xml = largeXml();
    const xmlBytes = Buffer.byteLength(xml);
    const parts = pieces(Buffer.from(snapshotOutput(xml)), 65536);
    const decoder = new SnapshotOutputDecoder();
    const before = process.memoryUsage().arrayBuffers;
    for (const part of parts) decoder.push(part);
    const grown = process.memoryUsage().arrayBuffers - before;
    // The reservation (the XML's size) + 2 × 64 KiB segments; a buffer doubled from 64 KiB to 128 KiB
    // before it made 1.10× here.
    expect(grown, `${grown} B for ${xmlBytes} B of XML`).toBeLessThan(xmlBytes + 3 * 65536);
    expect(interpretStreamedSnapshot(decoder.end(), { mode: 'snapshot' })).toMatchObject({ ok: true, xml });
  });

  it('chunks larger than the first one outgrow the estimate: the segments are joined in order', () => {
    const xml = largeXml();
    const bytes = Buffer.from(xml);
    // A 1-byte first chunk (estimate: chunkCount bytes), then chunks of up to 100,000 bytes.
    const cuts = [0, 1];
    while (cuts[cuts.length - 1]! < bytes.length)
      cuts.push(Math.min(bytes.length, cuts[cuts.length - 1]! + 100_000));
    const count = cuts.length - 1;
    const records = cuts.slice(1).map((end, i) => ({
      agentDeviceProtocol: 'android-snapshot-helper-v1',
      outputFormat: 'uiautomator-xml',
      chunkIndex: String(i),
      chunkCount: String(count),
      payloadBase64: bytes.subarray(cuts[i], end).toString('base64'),
    }));
    const nodeCount = (xml.match(/<node[\s>/]/g) ?? []).length;
    const output = `${[...records.flatMap((r) => statusLines(r)), ...resultLines(snapshotResultFields(xml, nodeCount))].join('\n')}\n`;
    for (const size of [65536, 4096, 1 << 22]) {
      const decoder = new SnapshotOutputDecoder();
      for (const part of pieces(Buffer.from(output), size)) decoder.push(part);
      expect(interpretStreamedSnapshot(decoder.end(), { mode: 'snapshot' })).toMatchObject({ ok: true, xml });
    }
  });
});
