import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { isBridgeError } from '../errors.ts';
import { BRIDGE_VERSION } from '../version.ts';
import { describeUnexpected, errorLine, jsonErrorLine } from './error-line.ts';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, ExitCode, UsageError } from './exit.ts';

/** Every command module exports one `registerX(program)`; add new ones here. */
const registrations: Array<() => Promise<(program: Command) => void>> = [
  () => import('./serve.ts').then((m) => m.registerServe),
  () => import('./release.ts').then((m) => m.registerRelease),
  () => import('./manifest.ts').then((m) => m.registerManifest),
  () => import('./simulate.ts').then((m) => m.registerSimulate),
  () => import('./gesture.ts').then((m) => m.registerGesture),
  () => import('./instrumentation.ts').then((m) => m.registerInstrumentation),
  () => import('./snapshot.ts').then((m) => m.registerSnapshot),
  () => import('./device.ts').then((m) => m.registerDevice),
  () => import('./lease.ts').then((m) => m.registerLease),
  () => import('./glass.ts').then((m) => m.registerGlass),
  () => import('./doctor.ts').then((m) => m.registerDoctor),
  () => import('./lease.ts').then((m) => m.registerDevices),
  () => import('./screenshot.ts').then((m) => m.registerScreenshot),
  () => import('./screen.ts').then((m) => m.registerScreen),
  () => import('./adb-endpoint.ts').then((m) => m.registerAdbEndpoint),
  () => import('./farm.ts').then((m) => m.registerFarm),
  () => import('./whoami.ts').then((m) => m.registerWhoami),
  () => import('./mcp.ts').then((m) => m.registerMcp),
];

export function buildProgram(): Command {
  const program = new Command('devicebridge')
    .description('Provider-neutral bridge between device farms and Android devices')
    .version(BRIDGE_VERSION)
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  for (const load of registrations) (await load())(program);
  // `--json` anywhere before a `--` asks for machine output: errors too are one JSON object on stdout.
  const end = argv.indexOf('--');
  const json = (end === -1 ? argv : argv.slice(0, end)).includes('--json');
  const fail = (exit: number, code: string, message: string, retryable: boolean): number => {
    if (json) process.stdout.write(`${jsonErrorLine(code, message, retryable)}\n`);
    return exit;
  };
  try {
    await program.parseAsync(argv);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof ExitCode) return err.code;
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) {
        return EXIT_OK;
      }
      return fail(EXIT_USAGE, 'INVALID_ARGUMENT', err.message.replace(/^error: /, ''), false);
    }
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`${errorLine(err.message)}\n`);
      return fail(EXIT_USAGE, 'INVALID_ARGUMENT', err.message, false);
    }
    if (isBridgeError(err)) {
      process.stderr.write(`${errorLine(`${err.code}: ${err.message}`)}\n`);
      return fail(EXIT_FAILURE, err.code, err.message, err.retryable);
    }
    process.stderr.write(`${errorLine(describeUnexpected(err))}\n`);
    return fail(EXIT_FAILURE, 'INTERNAL', describeUnexpected(err), false);
  }
}

/**
 * Last line of defence for errors no command caught (a rejected promise nobody awaited, an
 * exception in a timer): one line on stderr and exit 1, never a stack trace.
 */
export function installCrashHandlers(): void {
  const crash = (err: unknown) => {
    try {
      process.stderr.write(`${errorLine(describeUnexpected(err))}\n`);
    } finally {
      process.exit(EXIT_FAILURE);
    }
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  // A reader that went away (`devicebridge … | head`): stop quietly, as Unix tools do.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    crash(err);
  });
}
