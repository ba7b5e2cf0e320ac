/**
 * Parse the argv of `am instrument` (everything after `instrument`) like Android's
 * ActivityManagerShellCommand does: options first, then exactly one component. Errors carry the
 * stderr text and exit status `am` would produce.
 */

export interface AmInstrumentArgs {
  /** `-w`: wait for the instrumentation to finish and print its output. */
  wait: boolean;
  /** `-r`: raw mode (our bundles carry no `stream` key, so the output is the same). */
  raw: boolean;
  /** `-e KEY VALUE` (repeatable, the last one wins). */
  extras: Map<string, string>;
  user: string | undefined;
  noWindowAnimation: boolean;
  /** The component as given (`pkg/.Class` or `pkg/full.Class`). */
  component: string;
  /** `pkg/pkg.Class` (ComponentName.flattenToString). */
  flatComponent: string;
  packageName: string;
  className: string;
}

export type AmArgsResult =
  | { ok: true; args: AmInstrumentArgs }
  | { ok: false; stderr: string; exitCode: number };

/** Options that take no value and only change things we do not emulate. */
const IGNORED_FLAGS = new Set([
  '--no-hidden-api-checks',
  '--no-test-api-access',
  '--no-isolated-storage',
  '--no-restart',
  '--always-check-signature',
  '--instrument-sdk-sandbox',
  '--instrument-sdk-in-sandbox',
  '-m',
]);
/** Options that take one value we ignore. */
const IGNORED_WITH_VALUE = new Set(['-p', '--abi', '-f']);

function exception(type: string, message: string): { ok: false; stderr: string; exitCode: number } {
  return {
    ok: false,
    stderr:
      `Exception occurred while executing 'instrument':\n${type}: ${message}\n` +
      '\tat com.android.modules.utils.BasicShellCommandHandler.getNextArgRequired(BasicShellCommandHandler.java:295)\n' +
      '\tat com.android.server.am.ActivityManagerShellCommand.runInstrument(ActivityManagerShellCommand.java:1400)\n',
    exitCode: 255,
  };
}

/** Expand `pkg/.Class` to `pkg`, `pkg.Class`; undefined when it is not a component name. */
export function unflattenComponent(
  component: string,
): { packageName: string; className: string } | undefined {
  const slash = component.indexOf('/');
  if (slash <= 0 || slash === component.length - 1) return undefined;
  const packageName = component.slice(0, slash);
  const cls = component.slice(slash + 1);
  return { packageName, className: cls.startsWith('.') ? packageName + cls : cls };
}

export function parseAmInstrumentArgs(argv: readonly string[]): AmArgsResult {
  let wait = false;
  let raw = false;
  let user: string | undefined;
  let noWindowAnimation = false;
  const extras = new Map<string, string>();
  let i = 0;
  const next = (): string | undefined => {
    const value = argv[i + 1];
    if (value === undefined) return undefined;
    i += 1;
    return value;
  };
  for (; i < argv.length; i += 1) {
    const opt = argv[i] as string;
    if (!opt.startsWith('-') || opt === '-') break;
    if (opt === '-w') wait = true;
    else if (opt === '-r') raw = true;
    else if (opt === '--no-window-animation' || opt === '--no_window_animation') noWindowAnimation = true;
    else if (opt === '-e') {
      const key = next();
      if (key === undefined)
        return exception('java.lang.IllegalArgumentException', `Argument expected after "${opt}"`);
      const value = next();
      if (value === undefined)
        return exception('java.lang.IllegalArgumentException', `Argument expected after "${key}"`);
      extras.set(key, value);
    } else if (opt === '--user') {
      const value = next();
      if (value === undefined)
        return exception('java.lang.IllegalArgumentException', `Argument expected after "${opt}"`);
      user = value;
    } else if (IGNORED_WITH_VALUE.has(opt)) {
      if (next() === undefined) {
        return exception('java.lang.IllegalArgumentException', `Argument expected after "${opt}"`);
      }
    } else if (!IGNORED_FLAGS.has(opt)) {
      return { ok: false, stderr: `Error: Unknown option: ${opt}\n`, exitCode: 255 };
    }
  }
  const component = argv[i];
  if (component === undefined) {
    return exception(
      'java.lang.IllegalArgumentException',
      `Argument expected after "${argv[i - 1] ?? 'instrument'}"`,
    );
  }
  const parsed = unflattenComponent(component);
  if (parsed === undefined)
    return exception('java.lang.IllegalArgumentException', `Bad component name: ${component}`);
  return {
    ok: true,
    args: {
      wait,
      raw,
      extras,
      user,
      noWindowAnimation,
      component,
      flatComponent: `${parsed.packageName}/${parsed.className}`,
      ...parsed,
    },
  };
}
