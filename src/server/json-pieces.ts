/**
 * A JSON answer with large text fields, encoded a piece at a time: a field given as UTF-8 bytes
 * (a shell command's output, up to its cap of several MiB) is decoded, escaped and written
 * `PIECE_BYTES` at a time, each piece pulled by the HTTP response when it wants more. One
 * `JSON.stringify` of a whole answer and one write of the whole string would hold the event loop
 * for as long as that takes (hundreds of ms for a few answers at their cap), and every heartbeat,
 * readiness check and other request of the node would wait behind it.
 *
 * The text is what `bytes.toString('utf8')` gives (a malformed sequence becomes U+FFFD; a
 * character split between two pieces is kept whole), so the answer parses to the same value as
 * `JSON.stringify` of the decoded fields.
 */
import { StringDecoder } from 'node:string_decoder';
import { TurnBudget } from '../event-loop-turns.ts';

/** Bytes of one text field decoded and escaped per piece. */
export const PIECE_BYTES = 64 * 1024;

/** A JSON object whose values are JSON values, or UTF-8 bytes to be written as a JSON string. */
export type PiecewiseFields = Record<string, Buffer | string | number | boolean | null>;

/** A decoded string's JSON escape, without the quotes. */
function escaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** The object's JSON text, in pieces (each a bounded amount of work). */
export function* jsonPieces(fields: PiecewiseFields, pieceBytes = PIECE_BYTES): Generator<string> {
  let first = true;
  for (const [key, value] of Object.entries(fields)) {
    const head = `${first ? '{' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (!Buffer.isBuffer(value)) {
      yield head + JSON.stringify(value);
      continue;
    }
    const decoder = new StringDecoder('utf8');
    let piece = `${head}"`;
    for (let at = 0; at < value.length; at += pieceBytes) {
      piece += escaped(decoder.write(value.subarray(at, at + pieceBytes)));
      yield piece;
      piece = '';
    }
    yield `${piece}${escaped(decoder.end())}"`;
  }
  yield first ? '{}' : '}';
}

/**
 * The object's JSON as a byte stream: one piece made per pull, so the response's reader (and the
 * socket's backpressure) sets the pace; at most `TURN_BYTES` per turn of the event loop, so other
 * work of the node runs between pieces even when the reader takes everything at once.
 */
export function jsonPieceStream(
  fields: PiecewiseFields,
  pieceBytes = PIECE_BYTES,
): ReadableStream<Uint8Array> {
  const pieces = jsonPieces(fields, pieceBytes);
  const encoder = new TextEncoder();
  const turns = new TurnBudget();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = pieces.next();
        if (next.done) {
          controller.close();
          return;
        }
        const bytes = encoder.encode(next.value);
        controller.enqueue(bytes);
        await turns.spend(bytes.length);
      },
      cancel() {
        pieces.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}
