/**
 * Snapshot chunk reassembly and interpretation of a one-shot helper run (the snapshot helper contract, "Output Contract").
 *
 * The helper sends the XML as UTF-8 bytes cut into 2 KiB pieces, one status record per piece with
 * `outputFormat=uiautomator-xml`, `chunkIndex`, `chunkCount` and `payloadBase64` (padded, no wrap).
 * Pieces are joined as BYTES (a UTF-8 sequence may straddle two chunks) and decoded once. Pure.
 */
import { Buffer } from 'node:buffer';
import type { BridgeError } from '../../errors.ts';
import {
  bytesToXml,
  type ChunkAssembly,
  decodedLength,
  duplicate,
  invalidBase64,
  missing,
  type SnapshotOutputDecoder,
} from './chunk-stream.ts';
import {
  type Failure,
  type Fields,
  type GestureResultFields,
  helperFailed,
  okVerdict,
  parseIntegerField,
  protocolError,
  SNAPSHOT_HELPER_PROTOCOL,
  SNAPSHOT_OUTPUT_FORMAT,
  type SnapshotResultFields,
  type ViewportResultFields,
} from './helper-fields.ts';
import type { InstrumentationOutput, InstrumentationStatus } from './instrumentation-output.ts';

export type { ChunkAssembly } from './chunk-stream.ts';

interface Chunk {
  index: number;
  payload: string;
}

function fieldsOf(record: InstrumentationStatus | Fields): Fields {
  const fields = (record as InstrumentationStatus).fields;
  return typeof fields === 'object' && fields !== null ? fields : (record as Fields);
}

/**
 * Join the snapshot chunks among `records` (status records or bare field maps). Records of another
 * protocol or format are ignored. Errors (`HELPER_PROTOCOL_ERROR`, `details.reason`): `no-chunks`,
 * `invalid-chunk-fields`, `chunk-count-mismatch`, `chunk-index-out-of-range`, `duplicate-chunk`,
 * `missing-chunk` (each naming `chunkIndex`), `invalid-base64`, `invalid-utf8`, `missing-hierarchy`.
 */
export function assembleSnapshotChunks(
  records: ReadonlyArray<InstrumentationStatus | Fields>,
): ChunkAssembly {
  const chunks: Chunk[] = [];
  let chunkCount = -1;
  for (let r = 0; r < records.length; r++) {
    const fields = fieldsOf(records[r] as InstrumentationStatus | Fields);
    if (fields['agentDeviceProtocol'] !== SNAPSHOT_HELPER_PROTOCOL) continue;
    if (fields['outputFormat'] !== SNAPSHOT_OUTPUT_FORMAT) continue;
    const payload = fields['payloadBase64'];
    const rawIndex = fields['chunkIndex'];
    const rawCount = fields['chunkCount'];
    // Status records of this protocol without chunk fields (e.g. `sessionReady`) are not chunks.
    if (payload === undefined && rawIndex === undefined && rawCount === undefined) continue;
    const index = parseIntegerField(rawIndex);
    const count = parseIntegerField(rawCount);
    if (payload === undefined || index === undefined || count === undefined || count < 1) {
      return protocolError('snapshot chunk record has missing or invalid chunk fields', {
        reason: 'invalid-chunk-fields',
        record: r,
        chunkIndex: rawIndex ?? null,
        chunkCount: rawCount ?? null,
        hasPayload: payload !== undefined,
      });
    }
    if (chunkCount === -1) chunkCount = count;
    else if (count !== chunkCount) {
      return protocolError(`chunk ${index} says chunkCount=${count}, earlier chunks said ${chunkCount}`, {
        reason: 'chunk-count-mismatch',
        chunkIndex: index,
        chunkCount: count,
        expectedChunkCount: chunkCount,
      });
    }
    if (index < 0 || index >= count) {
      return protocolError(`chunk index ${index} is out of range 0..${count - 1}`, {
        reason: 'chunk-index-out-of-range',
        chunkIndex: index,
        chunkCount: count,
      });
    }
    chunks.push({ index, payload });
  }
  if (chunks.length === 0) {
    return protocolError('no snapshot chunks in the helper output', { reason: 'no-chunks' });
  }
  // Order by index without allocating chunkCount slots for a hostile count: more chunks than
  // records means at least one is missing, found by sorting what is present.
  if (chunkCount > chunks.length) {
    const present = chunks.map((c) => c.index).sort((a, b) => a - b);
    let expect = 0;
    for (const index of present) {
      if (index === expect) expect++;
      else if (index < expect) return duplicate(index, chunkCount);
      else break;
    }
    return missing(expect, chunkCount, chunks.length);
  }
  const slots: Array<Chunk | undefined> = new Array(chunkCount);
  let total = 0;
  for (const chunk of chunks) {
    if (slots[chunk.index] !== undefined) return duplicate(chunk.index, chunkCount);
    slots[chunk.index] = chunk;
    const length = decodedLength(chunk.payload);
    if (length < 0) return invalidBase64(chunk.index);
    total += length;
  }
  for (let i = 0; i < chunkCount; i++) {
    if (slots[i] === undefined) return missing(i, chunkCount, chunks.length);
  }
  const bytes = Buffer.allocUnsafe(total);
  let offset = 0;
  for (let i = 0; i < chunkCount; i++) {
    const chunk = slots[i] as Chunk;
    const expected = decodedLength(chunk.payload);
    // Buffer's decoder skips characters outside the alphabet: a short write means corrupt text.
    const written = expected === 0 ? 0 : bytes.write(chunk.payload, offset, expected, 'base64');
    if (written !== expected) return invalidBase64(i);
    offset += written;
  }
  return bytesToXml(bytes, chunkCount);
}

export type SnapshotRunResult =
  | { ok: true; mode: 'snapshot'; result: SnapshotResultFields; xml: string }
  | { ok: true; mode: 'viewport'; result: ViewportResultFields }
  | { ok: true; mode: 'gesture'; result: GestureResultFields }
  | { ok: true; mode: 'session'; result: SnapshotResultFields }
  | { ok: false; error: BridgeError };

export interface InterpretOptions {
  /** The mode the caller ran (`-e mode`); by default it is inferred from the result fields. */
  mode?: 'snapshot' | 'viewport' | 'gesture';
}

function firstStatusError(output: InstrumentationOutput): string | undefined {
  for (const status of output.statuses) {
    const error = status.fields['Error'];
    if (error !== undefined) return error;
  }
  return output.pendingStatus?.['Error'];
}

export function interpretSnapshotResult(
  output: InstrumentationOutput,
  options: InterpretOptions = {},
): SnapshotRunResult {
  return interpret(output, options, output.statuses.length, firstStatusError(output), () =>
    assembleSnapshotChunks(output.statuses),
  );
}

/**
 * `interpretSnapshotResult` of a run decoded as it streamed in (`SnapshotOutputDecoder`): the same
 * answer the whole text gives, the chunks already decoded into one buffer.
 */
export function interpretStreamedSnapshot(
  decoded: ReturnType<SnapshotOutputDecoder['end']>,
  options: InterpretOptions = {},
): SnapshotRunResult {
  const { output, statuses, assembler } = decoded;
  const statusError = statuses.firstError ?? output.pendingStatus?.['Error'];
  return interpret(output, options, statuses.count, statusError, () => assembler.finish());
}

function interpret(
  output: InstrumentationOutput,
  options: InterpretOptions,
  statusCount: number,
  statusError: string | undefined,
  assemble: () => ChunkAssembly,
): SnapshotRunResult {
  const result = output.result;
  if (output.failed !== null || statusError !== undefined) {
    return helperFailed(
      statusError ?? `instrumentation failed to start: ${output.failed}`,
      {
        reason: 'instrumentation-not-started',
        ...(output.failed === null ? {} : { component: output.failed }),
        ...(statusError === undefined ? {} : { statusError }),
      },
      false,
    );
  }
  const shortMsg = result['shortMsg'];
  if (shortMsg?.includes('Process crashed')) {
    return helperFailed('Process crashed', {
      reason: 'crashed',
      shortMsg,
      ...(result['longMsg'] === undefined ? {} : { longMsg: result['longMsg'] }),
    });
  }
  if (output.aborted !== null) {
    return helperFailed(`instrumentation aborted: ${output.aborted}`, {
      reason: 'aborted',
      aborted: output.aborted,
    });
  }
  if (output.code === null) {
    return protocolError('helper output ended without INSTRUMENTATION_CODE', {
      reason: 'truncated-output',
      statuses: statusCount,
      resultFields: Object.keys(result).length,
    });
  }
  const protocol = result['agentDeviceProtocol'];
  if (protocol !== SNAPSHOT_HELPER_PROTOCOL) {
    if (shortMsg !== undefined) {
      return helperFailed(`instrumentation failed: ${shortMsg}`, {
        reason: 'instrumentation-error',
        shortMsg,
      });
    }
    return protocolError(
      protocol === undefined
        ? 'helper result has no agentDeviceProtocol'
        : `helper result protocol ${protocol} is not ${SNAPSHOT_HELPER_PROTOCOL}`,
      { reason: 'protocol-mismatch', agentDeviceProtocol: protocol ?? null, code: output.code },
    );
  }
  const verdict = okVerdict(result, 'helper result', { code: output.code });
  if (!verdict.ok) return verdict;
  const { typed } = verdict;
  const mode = options.mode ?? inferMode(result);
  if (mode === 'viewport') {
    for (const key of ['x', 'y', 'width', 'height']) {
      if (typed[key] === undefined) return missingField(key, mode);
    }
    return { ok: true, mode, result: typed as unknown as ViewportResultFields };
  }
  if (mode === 'gesture') {
    for (const key of ['kind', 'injectedEvents']) {
      if (typed[key] === undefined) return missingField(key, mode);
    }
    return { ok: true, mode, result: typed as unknown as GestureResultFields };
  }
  if (mode === 'session') return { ok: true, mode, result: typed as unknown as SnapshotResultFields };
  const assembled = assemble();
  if (!assembled.ok) return assembled;
  return { ok: true, mode: 'snapshot', result: typed as unknown as SnapshotResultFields, xml: assembled.xml };
}

function inferMode(result: Fields): 'snapshot' | 'viewport' | 'gesture' | 'session' {
  if (result['kind'] === 'viewport') return 'viewport';
  if (result['injectedEvents'] !== undefined || result['kind'] !== undefined) return 'gesture';
  if (result['sessionEnded'] === 'true') return 'session';
  return 'snapshot';
}

function missingField(key: string, mode: string): Failure {
  return protocolError(`${mode} result has no ${key}`, { reason: 'missing-field', field: key, mode });
}
