import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { isBridgeError } from '../errors.ts';
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
];

export function buildProgram(): Command {
  const program = new Command('devicebridge')
    .description('Provider-neutral bridge between device farms and Android devices')
    .version('0.1.0')
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  for (const load of registrations) (await load())(program);
  try {
    await program.parseAsync(argv);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof ExitCode) return err.code;
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) {
        return EXIT_OK;
      }
      return EXIT_USAGE;
    }
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`devicebridge: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (isBridgeError(err)) {
      process.stderr.write(`devicebridge: ${err.code}: ${err.message}\n`);
      return EXIT_FAILURE;
    }
    process.stderr.write(
      `devicebridge: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return EXIT_FAILURE;
  }
}
