/**
 * `devicebridge simulate`: run simulated devices that the real adb server reaches with
 * `adb connect 127.0.0.1:PORT`, until SIGINT/SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { type ControlServer, startControlServer } from '../simulator/control.ts';
import { FAULT_NAMES, FaultSpecError, parseFaultSpecs } from '../simulator/faults.ts';
import { startSimulator } from '../simulator/simulator.ts';
import type { Faults } from '../simulator/types.ts';
import { UsageError } from './exit.ts';

interface SimulateFlags {
  port: string;
  count: string;
  ui?: string;
  nodes?: string;
  fault: string[];
  requireAuth?: boolean;
  json?: boolean;
  seed?: string;
  controlPort?: string;
  logRate?: string;
}

/** Upper bound of `--log-rate` (lines per second per device). */
export const MAX_LOG_RATE = 200_000;

function integerFlag(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(text)}`);
  const value = Number(text);
  if (value < min || value > max)
    throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerSimulate(program: Command): void {
  program
    .command('simulate')
    .description(
      'Run simulated Android devices speaking the adbd wire protocol on 127.0.0.1 (adb connect ADDRESS)',
    )
    .option('--port <port>', 'first TCP port (devices use PORT..PORT+COUNT-1; 0 = random free ports)', '5555')
    .option('--count <n>', 'number of devices', '1')
    .option('--ui <file>', 'uiautomator XML the devices show (default: built-in screen)')
    .option('--nodes <n>', 'generate a UI tree with N nodes instead (benchmarks)')
    .option(
      '--fault <spec>',
      `inject a fault, repeatable (${FAULT_NAMES.join(', ')}; e.g. latency-ms=50, chunk=drop:2)`,
      collect,
      [],
    )
    .option('--require-auth', 'answer CNXN with AUTH and never accept: devices stay unauthorized')
    .option('--seed <n>', 'seed of the devices’ random choices (bundle key order)')
    .option(
      '--control-port <port>',
      'serve the run-time fault control API (HTTP/JSON) on 127.0.0.1:PORT (0 = any free port)',
    )
    .option('--log-rate <n>', 'synthetic log lines per second per device (logcat load tests; default 0)')
    .option('--json', 'print one JSON object per device and line: {"address","serial"}')
    .action(async (flags: SimulateFlags) => {
      const port = integerFlag('port', flags.port, 0, 65535);
      const count = integerFlag('count', flags.count, 1, 256);
      if (port !== 0 && port + count - 1 > 65535) throw new UsageError('--port + --count exceeds 65535');
      const nodes = flags.nodes === undefined ? undefined : integerFlag('nodes', flags.nodes, 1, 10_000_000);
      const seed = flags.seed === undefined ? undefined : integerFlag('seed', flags.seed, 0, 0xffffffff);
      const logRate =
        flags.logRate === undefined ? undefined : integerFlag('log-rate', flags.logRate, 0, MAX_LOG_RATE);
      const controlPort =
        flags.controlPort === undefined
          ? undefined
          : integerFlag('control-port', flags.controlPort, 0, 65535);
      let faults: Faults;
      try {
        faults = parseFaultSpecs(flags.fault);
      } catch (err) {
        if (err instanceof FaultSpecError) throw new UsageError(err.message);
        throw err;
      }
      let ui: string | undefined;
      if (flags.ui !== undefined) {
        try {
          ui = await readFile(flags.ui, 'utf8');
        } catch (err) {
          throw new UsageError(`--ui ${flags.ui}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
        }
        if (!ui.includes('<hierarchy'))
          throw new UsageError(`--ui ${flags.ui}: not a uiautomator dump (no <hierarchy>)`);
      }

      let simulator: Awaited<ReturnType<typeof startSimulator>>;
      try {
        simulator = await startSimulator({
          port,
          count,
          faults,
          requireAuth: flags.requireAuth === true,
          ...(ui === undefined ? {} : { ui }),
          ...(nodes === undefined ? {} : { nodes }),
          ...(seed === undefined ? {} : { seed }),
          ...(logRate === undefined ? {} : { logRate }),
        });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EACCES') {
          throw new UsageError(
            `cannot listen on 127.0.0.1:${port}${count > 1 ? `..${port + count - 1}` : ''}: ${code}`,
          );
        }
        throw err;
      }

      let control: ControlServer | undefined;
      if (controlPort !== undefined) {
        try {
          control = await startControlServer(simulator.devices, controlPort);
        } catch (err) {
          await simulator.close();
          throw new UsageError(
            `cannot serve --control-port on 127.0.0.1:${controlPort}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
          );
        }
        if (flags.json === true) process.stdout.write(`${JSON.stringify({ control: control.url })}\n`);
        else process.stdout.write(`control\t${control.url}\n`);
      }
      for (const device of simulator.devices) {
        if (flags.json === true) {
          process.stdout.write(`${JSON.stringify({ address: device.address, serial: device.serial })}\n`);
        } else {
          process.stdout.write(
            `${device.address}\tserial ${device.serial}\t(adb connect ${device.address})\n`,
          );
        }
      }
      if (flags.json !== true) process.stderr.write('simulating; press Ctrl-C to stop\n');

      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await control?.close();
      await simulator.close();
    });
}
