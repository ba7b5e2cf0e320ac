/**
 * The emulated Android snapshot helper (the snapshot helper contract): what `SnapshotInstrumentation` prints through
 * `am instrument` in its three one-shot modes (snapshot, viewport, gesture), or the persistent
 * session it starts on `-e sessionPort P`. The XML it "captures" is the device's uiautomator XML
 * cut to maxDepth/maxNodes. Device faults (chunk drop/duplicate/corrupt, crash, timeout) apply here.
 */
import type { SimDevice } from '../types.ts';
import { formatResult, PROCESS_CRASHED } from './am-output.ts';
import {
  capture,
  chunkOutput,
  chunkRecords,
  errorBundle,
  HelperFailure,
  type HelperOptions,
  injectGesture,
  metadataBundle,
  numberExtra,
  protocolBundle,
  RESULT_CODE_ERROR,
  RESULT_CODE_OK,
  readOptions,
  stringExtra,
  viewportFields,
} from './helper-core.ts';
import type { InstrumentationRun } from './instrumentation-run.ts';
import { runSession } from './session-server.ts';

/** Run the helper for one `am instrument` invocation until it finishes or is killed. */
export async function runSnapshotHelper(
  run: InstrumentationRun,
  device: SimDevice,
  extras: ReadonlyMap<string, string>,
): Promise<void> {
  const random = (): number => device.random();
  const faults = device.faults;
  if (faults.helperTimeout) {
    await run.stopped;
    return;
  }
  let options: HelperOptions;
  try {
    options = readOptions(extras);
  } catch (err) {
    run.finish(formatResult([...protocolBundle(), ...errorBundle(err)], RESULT_CODE_ERROR, random));
    return;
  }
  const metadata = metadataBundle(options);
  const mode = stringExtra(extras, 'mode');
  try {
    if (mode === 'viewport' || mode === 'gesture') {
      if (faults.helperCrash) {
        run.finish(PROCESS_CRASHED);
        return;
      }
      const fields =
        mode === 'viewport'
          ? viewportFields(device)
          : await injectGesture(device, stringExtra(extras, 'payloadBase64'));
      run.finish(formatResult([...metadata, ...fields], RESULT_CODE_OK, random));
      return;
    }
    if (mode !== undefined && mode !== 'snapshot') {
      throw new HelperFailure('java.lang.IllegalArgumentException', `Unsupported mode: ${mode}`);
    }
    const sessionPort = numberExtra(extras, 'sessionPort', 0, 32);
    if (sessionPort > 0) {
      if (faults.helperCrash) {
        run.finish(PROCESS_CRASHED);
        return;
      }
      await runSession(run, device, options, sessionPort);
      return;
    }
    const captured = await capture(device, options);
    const emitChunks = stringExtra(extras, 'emitChunks')?.toLowerCase() !== 'false';
    if (faults.helperCrash) {
      // The process dies half way through streaming its chunks.
      const records = emitChunks ? chunkRecords(device, captured.bytes) : [];
      run.write(records.slice(0, Math.floor(records.length / 2)).join(''));
      run.finish(PROCESS_CRASHED);
      return;
    }
    run.write(emitChunks ? chunkOutput(device, captured.bytes) : '');
    run.finish(formatResult([...metadata, ['ok', 'true'], ...captured.fields], RESULT_CODE_OK, random));
  } catch (err) {
    run.finish(formatResult([...metadata, ...errorBundle(err)], RESULT_CODE_ERROR, random));
  }
}
