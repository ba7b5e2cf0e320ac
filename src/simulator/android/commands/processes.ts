/**
 * The process table as the shell user sees it: toybox `ps [-A|-e] [-o FIELD,...]` and `kill`
 * (mksh's builtin, what `adb shell kill` runs, and `toybox kill`). The table holds a few fixed
 * system processes, every process registered on the device (background jobs, the glass agent;
 * user `shell`), and the shell and `ps` themselves with fresh pids.
 */
import type { CommandContext, CommandFn } from '../context.ts';

export interface ProcessRow {
  pid: number;
  ppid: number;
  user: string;
  uid: number;
  /** argv joined with spaces, argv[0] as exec'd (`/system/bin/init second_stage`). */
  cmdline: string;
  /** The SELinux context (`u:r:adbd:s0`); absent: the shell user's `u:r:shell:s0`. */
  label?: string;
}

const ADBD_PID = 602;

/** Long-running system processes of a booted device (pids below the simulator's first, 4200). */
const SYSTEM_PROCESSES: readonly ProcessRow[] = [
  { pid: 1, ppid: 0, user: 'root', uid: 0, cmdline: '/system/bin/init second_stage', label: 'u:r:init:s0' },
  { pid: 2, ppid: 0, user: 'root', uid: 0, cmdline: '[kthreadd]', label: 'u:r:kernel:s0' },
  { pid: 312, ppid: 1, user: 'root', uid: 0, cmdline: '/system/bin/ueventd', label: 'u:r:ueventd:s0' },
  { pid: 540, ppid: 1, user: 'logd', uid: 1036, cmdline: '/system/bin/logd', label: 'u:r:logd:s0' },
  {
    pid: 541,
    ppid: 1,
    user: 'system',
    uid: 1000,
    cmdline: '/system/bin/servicemanager',
    label: 'u:r:servicemanager:s0',
  },
  { pid: 560, ppid: 1, user: 'root', uid: 0, cmdline: 'zygote64', label: 'u:r:zygote:s0' },
  {
    pid: 588,
    ppid: 1,
    user: 'system',
    uid: 1000,
    cmdline: '/system/bin/surfaceflinger',
    label: 'u:r:surfaceflinger:s0',
  },
  {
    pid: ADBD_PID,
    ppid: 1,
    user: 'shell',
    uid: 2000,
    cmdline: '/apex/com.android.adbd/bin/adbd --root_seclabel=u:r:su:s0',
    label: 'u:r:adbd:s0',
  },
  {
    pid: 1043,
    ppid: 560,
    user: 'system',
    uid: 1000,
    cmdline: 'system_server',
    label: 'u:r:system_server:s0',
  },
  {
    pid: 1320,
    ppid: 560,
    user: 'u0_a120',
    uid: 10120,
    cmdline: 'com.android.systemui',
    label: 'u:r:platform_app:s0:c512,c768',
  },
  {
    pid: 1688,
    ppid: 560,
    user: 'u0_a110',
    uid: 10110,
    cmdline: 'com.android.launcher3',
    label: 'u:r:priv_app:s0:c512,c768',
  },
];

/** ARGS: the command line with the directory of argv[0] dropped (toybox's "argv[] -path"). */
function args(cmdline: string): string {
  if (cmdline.startsWith('[')) return cmdline;
  const space = cmdline.indexOf(' ');
  const argv0 = space < 0 ? cmdline : cmdline.slice(0, space);
  return argv0.slice(argv0.lastIndexOf('/') + 1) + (space < 0 ? '' : cmdline.slice(space));
}

/** toybox's -o fields: width (negative: left-aligned) and value. */
const FIELDS: Record<string, { width: number; value(row: ProcessRow): string }> = {
  PID: { width: 5, value: (r) => String(r.pid) },
  PPID: { width: 5, value: (r) => String(r.ppid) },
  USER: { width: -12, value: (r) => r.user },
  UID: { width: 5, value: (r) => String(r.uid) },
  VSZ: { width: 7, value: (r) => (r.cmdline.startsWith('[') ? '0' : '10899132') },
  RSS: { width: 6, value: (r) => (r.cmdline.startsWith('[') ? '0' : '3732') },
  WCHAN: { width: -6, value: () => '0' },
  ADDR: { width: 14, value: () => '0' },
  S: { width: -1, value: () => 'S' },
  NAME: { width: -27, value: (r) => args(r.cmdline).split(' ')[0] as string },
  ARGS: { width: -27, value: (r) => args(r.cmdline) },
  CMDLINE: { width: -27, value: (r) => r.cmdline },
  LABEL: { width: -31, value: (r) => r.label ?? 'u:r:shell:s0' },
};

/** `ps` without -o: toybox's default columns. */
const DEFAULT_FIELDS = ['USER', 'PID', 'PPID', 'VSZ', 'RSS', 'WCHAN', 'ADDR', 'S', 'NAME'];

/**
 * One line of `ps` output as toybox lays it out: fields one space apart, each padded to its width
 * (a wider value takes the room from the padding of the fields after it), the last one unpadded.
 */
export function formatPsLine(fields: readonly string[], values: readonly string[]): string {
  let line = '';
  let end = -1;
  for (const [i, name] of fields.entries()) {
    const value = values[i] as string;
    const width = FIELDS[name]?.width ?? 0;
    if (i > 0) line += ' ';
    end += 1 + Math.abs(width);
    if (i === fields.length - 1 && width < 0) {
      line += value;
      break;
    }
    const pad = ' '.repeat(Math.max(0, end - line.length - value.length));
    line += width < 0 ? value + pad : pad + value;
  }
  return `${line}\n`;
}

/** The rows `ps` sees: system processes, registered ones, then this shell and `ps` (by pid). */
function processRows(ctx: CommandContext, psPid: number, psCmdline: string): ProcessRow[] {
  const registered = ctx.android.device
    .processes()
    .map((p) => ({ pid: p.pid, ppid: p.ppid, user: 'shell', uid: 2000, cmdline: p.cmdline }));
  const own: ProcessRow[] = [
    { pid: ctx.shell.pid, ppid: ADBD_PID, user: 'shell', uid: 2000, cmdline: ctx.shell.cmdline },
    { pid: psPid, ppid: ctx.shell.pid, user: 'shell', uid: 2000, cmdline: psCmdline },
  ];
  const rows = [...SYSTEM_PROCESSES, ...registered, ...own].sort((a, b) => a.pid - b.pid);
  // A process whose shell has exited is re-parented to init.
  const alive = new Set(rows.map((r) => r.pid));
  return rows.map((r) => (r.ppid === 0 || alive.has(r.ppid) ? r : { ...r, ppid: 1 }));
}

/** toybox `ps [-A|-e] [-o FIELD[,FIELD...]]...`; without -A only this session's processes. */
export const ps: CommandFn = async (argv, ctx) => {
  let all = false;
  const fields: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-A' || arg === '-e') all = true;
    else if (arg === '-o' || arg === '-O') {
      const list = argv[++i];
      if (list === undefined) {
        ctx.io.stderr(`ps: Missing argument to -o (see "ps --help")\n`);
        return 1;
      }
      fields.push(...list.split(',').map((f) => f.toUpperCase()));
    } else if (arg.startsWith('-o'))
      fields.push(
        ...arg
          .slice(2)
          .split(',')
          .map((f) => f.toUpperCase()),
      );
    else {
      ctx.io.stderr(`ps: Unknown option '${arg.replace(/^-+/, '')}' (see "ps --help")\n`);
      return 1;
    }
  }
  if (fields.length === 0) fields.push(...DEFAULT_FIELDS);
  const bad = fields.find((f) => FIELDS[f] === undefined);
  if (bad !== undefined) {
    ctx.io.stderr(`ps: bad -o ${bad}\n`);
    return 1;
  }
  const psPid = ctx.android.device.allocatePid();
  let rows = processRows(ctx, psPid, ['ps', ...argv].join(' '));
  if (!all) rows = rows.filter((r) => r.pid === ctx.shell.pid || r.pid === psPid);
  let out = formatPsLine(fields, fields);
  for (const row of rows) {
    out += formatPsLine(
      fields,
      fields.map((f) => (FIELDS[f] as (typeof FIELDS)[string]).value(row)),
    );
  }
  ctx.io.stdout(out);
  return 0;
};

const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, KILL: 9, USR1: 10, USR2: 12, TERM: 15 };

/** Parse `-9`, `-KILL`, `-SIGKILL`, `-s KILL`, `-n 9`; `bad` names an unknown signal. */
function parseSignal(argv: string[]): { signal: number; pids: string[] } | { bad: string } {
  let signal = 15;
  let i = 0;
  const named = (name: string): number | undefined => {
    if (/^[0-9]+$/.test(name)) return Number(name) <= 64 ? Number(name) : undefined;
    return SIGNALS[name.toUpperCase().replace(/^SIG/, '')];
  };
  const first = argv[0] ?? '';
  if (first === '-s' || first === '-n') {
    const value = argv[1] ?? '';
    const parsed = named(value);
    if (parsed === undefined) return { bad: value };
    signal = parsed;
    i = 2;
  } else if (first.startsWith('-') && first !== '--') {
    const parsed = named(first.slice(1));
    if (parsed === undefined) return { bad: first.slice(1) };
    signal = parsed;
    i = 1;
  }
  if (argv[i] === '--') i++;
  return { signal, pids: argv.slice(i) };
}

type KillOutcome = 'ok' | 'ESRCH' | 'EPERM';

/** Send `signal` to `pid` as the shell user: registered processes die, system ones refuse. */
function signalProcess(ctx: CommandContext, pid: number, signal: number): KillOutcome {
  const device = ctx.android.device;
  if (pid === ctx.shell.pid) return 'ok';
  if (device.processes().some((p) => p.pid === pid)) {
    if (signal !== 0) device.kill(pid);
    return 'ok';
  }
  const system = SYSTEM_PROCESSES.find((p) => p.pid === pid);
  if (system !== undefined) return system.user === 'shell' && signal === 0 ? 'ok' : 'EPERM';
  return 'ESRCH';
}

const ERRNO_TEXT: Record<Exclude<KillOutcome, 'ok'>, string> = {
  ESRCH: 'No such process',
  EPERM: 'Operation not permitted',
};

function killCommand(style: 'mksh' | 'toybox'): CommandFn {
  return async (argv, ctx) => {
    const parsed = parseSignal(argv);
    if ('bad' in parsed) {
      ctx.io.stderr(
        style === 'mksh'
          ? `/system/bin/sh: kill: bad signal '${parsed.bad}'\n`
          : `kill: Unknown signal '${parsed.bad}'\n`,
      );
      return 1;
    }
    if (parsed.pids.length === 0) {
      ctx.io.stderr(
        style === 'mksh'
          ? 'usage:\tkill [-s signame | -signum | -signame] { job | pid | pgrp } ...\n\tkill -l [exit_status ...]\n'
          : 'kill: missing argument (see "kill --help")\n',
      );
      return 1;
    }
    let status = 0;
    for (const arg of parsed.pids) {
      const outcome: KillOutcome | 'EINVAL' = /^[0-9]+$/.test(arg)
        ? signalProcess(ctx, Number(arg), parsed.signal)
        : 'EINVAL';
      if (outcome === 'ok') continue;
      status = 1;
      if (style === 'mksh') {
        const why = outcome === 'EINVAL' ? 'arguments must be jobs or process IDs' : ERRNO_TEXT[outcome];
        ctx.io.stderr(`/system/bin/sh: kill: ${arg}: ${why}\n`);
      } else {
        ctx.io.stderr(`kill: bad pid '${arg}': ${ERRNO_TEXT[outcome === 'EINVAL' ? 'ESRCH' : outcome]}\n`);
      }
    }
    return status;
  };
}

/** mksh's builtin `kill` (what `adb shell kill PID` runs). */
export const shellKill = killCommand('mksh');
/** toybox `kill` (`toybox kill PID`). */
export const toyboxKill = killCommand('toybox');
