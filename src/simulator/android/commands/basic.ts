/** Small shell utilities: echo, true, false, sh, id, whoami, uname, sleep, nohup, yes. */
import type { CommandFn } from '../context.ts';
import { toyboxUsage } from './files.ts';

/** mksh's `echo`: `-n` drops the newline, `-e` interprets backslash escapes, `-E` does not. */
export const echo: CommandFn = async (argv, ctx) => {
  let newline = true;
  let escapes = false;
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!/^-[neE]+$/.test(arg)) break;
    for (const flag of arg.slice(1)) {
      if (flag === 'n') newline = false;
      else if (flag === 'e') escapes = true;
      else escapes = false;
    }
  }
  let text = argv.slice(i).join(' ');
  if (escapes) {
    const cut = text.indexOf('\\c');
    if (cut >= 0) {
      text = text.slice(0, cut);
      newline = false;
    }
    text = interpretEscapes(text);
  }
  ctx.io.stdout(newline ? `${text}\n` : text);
  return 0;
};

export function interpretEscapes(text: string): string {
  const map: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    a: '\x07',
    b: '\b',
    f: '\f',
    v: '\v',
    '\\': '\\',
    e: '\x1b',
  };
  return text.replace(/\\(0[0-7]{0,3}|[ntrabfve\\])/g, (_m, code: string) =>
    code.startsWith('0') ? String.fromCharCode(Number.parseInt(code, 8) || 0) : (map[code] ?? ''),
  );
}

export const trueCommand: CommandFn = async () => 0;
export const falseCommand: CommandFn = async () => 1;

/** `sh -c SCRIPT`; `sh` with no script runs stdin as a script. */
export const sh: CommandFn = async (argv, ctx) => {
  if (argv[0] === '-c') {
    const script = argv[1];
    if (script === undefined) {
      ctx.io.stderr('/system/bin/sh: -c: option requires an argument\n');
      return 1;
    }
    return ctx.runScript(script);
  }
  const file = argv[0];
  if (file !== undefined) {
    try {
      return await ctx.runScript(new TextDecoder().decode(ctx.android.fs.read(file)), file);
    } catch {
      ctx.io.stderr(`/system/bin/sh: ${file}: No such file or directory\n`);
      return 127;
    }
  }
  return ctx.runScript(new TextDecoder().decode(await ctx.stdin.readAll()));
};

const SHELL_GROUPS =
  '2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid),3012(readtracefs)';

export const id: CommandFn = async (argv, ctx) => {
  if (argv.includes('-u')) ctx.io.stdout(argv.includes('-n') ? 'shell\n' : '2000\n');
  else if (argv.includes('-g')) ctx.io.stdout(argv.includes('-n') ? 'shell\n' : '2000\n');
  else ctx.io.stdout(`uid=2000(shell) gid=2000(shell) groups=${SHELL_GROUPS} context=u:r:shell:s0\n`);
  return 0;
};

export const whoami: CommandFn = async (_argv, ctx) => {
  ctx.io.stdout('shell\n');
  return 0;
};

const KERNEL_RELEASE = '6.1.23-android14-4-00257-g7e35917775b8-ab9964412';
const KERNEL_VERSION = '#1 SMP PREEMPT Mon Apr 17 20:50:58 UTC 2023';

/** toybox `uname [-asnrvm]`. */
export const uname: CommandFn = async (argv, ctx) => {
  const fields = {
    s: 'Linux',
    n: 'localhost',
    r: KERNEL_RELEASE,
    v: KERNEL_VERSION,
    m: 'x86_64',
    o: 'Toybox',
  };
  const flags = new Set(argv.filter((a) => a.startsWith('-')).flatMap((a) => [...a.slice(1)]));
  const bad = [...flags].find((f) => !'asnrvmop'.includes(f));
  if (bad !== undefined) {
    ctx.io.stderr(toyboxUsage('uname', bad));
    return 1;
  }
  if (flags.size === 0) flags.add('s');
  if (flags.has('a')) for (const f of 'snrvmo') flags.add(f);
  const out: string[] = [];
  for (const f of 'snrvmpo') {
    if (!flags.has(f)) continue;
    out.push(f === 'p' ? 'unknown' : fields[f as keyof typeof fields]);
  }
  ctx.io.stdout(`${out.join(' ')}\n`);
  return 0;
};

/**
 * `sleep SECONDS` (fractions allowed); aborted with the shell, or by a kill when it is a background
 * job (whose timer never keeps Node alive).
 */
export const sleep: CommandFn = async (argv, ctx) => {
  const seconds = Number(argv[0]);
  if (argv[0] === undefined || !Number.isFinite(seconds) || seconds < 0) {
    ctx.io.stderr(`sleep: invalid number '${argv[0] ?? ''}'\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, seconds * 1000);
    if (ctx.detached) timer.unref();
    ctx.io.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return 0;
};

/**
 * toybox `pkill [-f] PATTERN` (PATTERN an extended regex): exit 0 when a process was killed, 1 when
 * none matched or the pattern is not a regex.
 */
export const pkill: CommandFn = async (argv, ctx) => {
  const args = argv.filter((a) => a !== '-f');
  const [pattern] = args;
  if (pattern === undefined || args.length !== 1) {
    ctx.io.stderr('pkill: Needs 1 argument\n');
    return 1;
  }
  try {
    return ctx.android.device.killMatching(pattern) > 0 ? 0 : 1;
  } catch {
    ctx.io.stderr(`pkill: bad regex '${pattern}'\n`);
    return 1;
  }
};

/**
 * toybox `nohup COMMAND [ARG...]`: runs COMMAND in its place, immune to hang-ups. adb's stdout is no
 * terminal, so no `nohup.out` is written.
 */
export const nohup: CommandFn = async (argv, ctx) => {
  if (argv.length === 0) {
    ctx.io.stderr(toyboxUsage('nohup'));
    return 125;
  }
  return ctx.runArgv(argv);
};

/** Output waiting for the host beyond which `yes` waits, as a writer blocks on a full pipe. */
const YES_MAX_BACKLOG_BYTES = 256 * 1024;

/**
 * toybox `yes [STRING...]`: the line (`y` by default) forever, until the shell is closed; it writes
 * only as fast as the host reads (a full pipe blocks the writer).
 */
export const yes: CommandFn = async (argv, ctx) => {
  const line = `${argv.length === 0 ? 'y' : argv.join(' ')}\n`;
  const block = Buffer.from(line.repeat(Math.max(1, Math.floor((16 * 1024) / Buffer.byteLength(line)))));
  while (!ctx.io.signal.aborted) {
    if ((ctx.io.backlog?.() ?? 0) > YES_MAX_BACKLOG_BYTES) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      continue;
    }
    ctx.io.stdout(block);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return 0;
};
