/**
 * `devicebridge doctor --lease ID [--timeout S] [--json]`: every capability of the leased device
 * checked (the bridge's POST /v1/leases/{id}/doctor). Human output: the device, then one line per
 * check (status, time, what was seen) and, under a known failure, what to do. `--json` prints the
 * report as the API answers it (the `DoctorReport` schema). Exit codes: 0 every check passed or was
 * skipped, 1 a check failed (or the bridge refused the run), 2 usage or invalid input.
 */
import type { Command } from 'commander';
import type { DoctorReport } from '../api/index.ts';
import { ExitCode, UsageError } from './exit.ts';
import { type ClientFlags, callBridge, client, common, int } from './lease.ts';

type DoctorFlags = ClientFlags & { lease?: string; timeout?: string };

const MARK = { pass: 'pass', fail: 'FAIL', skip: 'skip' } as const;

/** The report for people: who the device is, a table of the checks, the fixes, how to send it. */
export function formatDoctorReport(report: DoctorReport): string {
  const d = report.device;
  const lines = [
    `device ${report.deviceId}: ${d.manufacturer ?? '?'} ${d.model ?? '?'}, Android ${d.release ?? '?'} (API ${d.sdk ?? '?'})`,
    `fingerprint ${d.fingerprint ?? '?'}`,
    `bridge ${report.bridge.version} on ${report.bridge.node}; helpers ${report.helpers
      .map((h) => `${h.name} ${h.version ?? 'not published'}`)
      .join(', ')}`,
    '',
  ];
  const width = Math.max(...report.checks.map((c) => c.id.length));
  for (const c of report.checks) {
    lines.push(`${MARK[c.status]}  ${c.id.padEnd(width)}  ${`${c.elapsedMs} ms`.padStart(8)}  ${c.detail}`);
    if (c.status === 'fail' && c.fix) lines.push(`      ${' '.repeat(width)}  fix: ${c.fix}`);
  }
  const { pass, fail, skip } = report.summary;
  lines.push(
    '',
    `${pass} passed, ${fail} failed, ${skip} skipped in ${report.elapsedMs} ms`,
    ...(fail > 0
      ? [`To send this report: devicebridge doctor --lease ${report.leaseId} --json > doctor-report.json`]
      : []),
  );
  return lines.join('\n');
}

export function registerDoctor(program: Command): void {
  common(
    program
      .command('doctor')
      .description(
        'Check every capability of the leased device (helpers, snapshot, gestures, glass) and report',
      )
      .option('--lease <id>', 'the lease whose device to check')
      .option('--timeout <seconds>', 'bound of the whole run (default 120)'),
  ).action(async (opts: DoctorFlags) => {
    if (!opts.lease) throw new UsageError('doctor needs --lease ID');
    const lease = opts.lease;
    const timeoutSeconds = int('--timeout', opts.timeout);
    const c = await client(opts);
    const report = await callBridge(opts, () =>
      c.doctor(lease, timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    );
    process.stdout.write(opts.json ? `${JSON.stringify(report)}\n` : `${formatDoctorReport(report)}\n`);
    if (!report.ok) throw new ExitCode(1);
  });
}
