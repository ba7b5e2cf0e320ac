/**
 * Emulated on-device helpers: `am instrument` for installed helper APKs, `am force-stop`, and the
 * UI sources (built-in screen, generated large trees) the emulated snapshot helper captures.
 */
import type { ShellCommand } from '../types.ts';
import { parseAmInstrumentArgs } from './am-instrument-args.ts';
import { forceStop, InstrumentationRun, registerRun } from './instrumentation-run.ts';
import { runSnapshotHelper } from './snapshot-helper.ts';

export { BUILTIN_SCREEN_SIZE, builtinScreenXml } from './builtin-screen.ts';
export { generateUiXml } from './generate-ui.ts';
export { forceStop, runningHelperCount, stopAllHelpers } from './instrumentation-run.ts';

/** The stack trace `am` prints under INSTRUMENTATION_FAILED (modern Android, cmd-based `am`). */
const INSTRUMENTATION_FAILED_TRACE =
  '\tat com.android.commands.am.Instrument.run(Instrument.java:519)\n' +
  '\tat com.android.commands.am.Am.runInstrument(Am.java:202)\n' +
  '\tat com.android.commands.am.Am.onRun(Am.java:80)\n' +
  '\tat com.android.internal.os.BaseCommand.run(BaseCommand.java:60)\n' +
  '\tat com.android.commands.am.Am.main(Am.java:50)\n' +
  '\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n' +
  '\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:399)\n';

/**
 * `am instrument ARGS...` (argv after `instrument`). Prints `am`'s framing; resolves to the exit code.
 * With `-w` it resolves when the instrumentation finishes (or is force-stopped, or `io.signal`
 * aborts, unless the survive-hangup fault keeps it running); without `-w` it starts the instrumentation in the background and returns 0 at once.
 * Starting an instrumentation first kills any running one of the same package, as Android does.
 */
export const amInstrument: ShellCommand = async (argv, io, device) => {
  const parsed = parseAmInstrumentArgs(argv);
  if (!parsed.ok) {
    io.stderr(parsed.stderr);
    return parsed.exitCode;
  }
  const args = parsed.args;
  const found = device.findInstrumentation(args.component);
  if (found === undefined) {
    if (args.wait) {
      io.stdout(
        'INSTRUMENTATION_STATUS: id=ActivityManagerService\n' +
          `INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{${args.flatComponent}}\n` +
          'INSTRUMENTATION_STATUS_CODE: -1\n',
      );
    }
    io.stderr(
      `android.util.AndroidException: INSTRUMENTATION_FAILED: ${args.flatComponent}\n${INSTRUMENTATION_FAILED_TRACE}`,
    );
    return 1;
  }
  const packageName = found.pkg.packageName;
  forceStop(device, packageName);
  if (found.instrumentation.targetPackage !== packageName)
    forceStop(device, found.instrumentation.targetPackage);

  // Output goes to `am`'s shell while it is open (an instrumentation that survived its hang-up writes nowhere).
  const run = new InstrumentationRun(
    packageName,
    args.wait
      ? (text) => {
          if (!io.signal.aborted) io.stdout(text);
        }
      : () => {},
  );
  const unregister = registerRun(device, run);
  const work = runSnapshotHelper(run, device, args.extras).finally(unregister);
  if (!args.wait) {
    work.catch(() => {});
    return 0;
  }
  // The host closing `am`'s shell ends the instrumentation, unless the device lets it outlive the
  // hang-up (the survive-hangup fault: a real device's instrumentation runs on after `adb shell` ends).
  const onAbort = (): void => {
    if (device.faults.surviveHangup !== true) run.stop('abort');
  };
  if (io.signal.aborted) onAbort();
  else io.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.race([work, run.stopped]);
  } finally {
    io.signal.removeEventListener('abort', onAbort);
  }
  return 0;
};
