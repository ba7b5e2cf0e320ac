/**
 * Interpreter for the parsed mksh subset. Runs commands from a registry; variables, `$?`, `exit`,
 * `cd`, redirections to the in-memory file system, pipes (buffered: the left side runs to completion
 * first), `$(...)` substitution and pathname globbing on unquoted `*`, `?`, `[...]`.
 *
 * `CMD &` starts a background job: it runs detached in a subshell (stdin empty, output discarded),
 * is registered as a running process of the device (so `ps` lists it and `kill` ends it) and outlives
 * the shell and the host's connection, as a `nohup CMD &` does on a device; the shell goes on at once.
 */
import type { ShellIO } from '../../types.ts';
import { type AndroidRuntime, type CommandContext, type CommandFn, simulatedFailure } from '../context.ts';
import { FsError, normalizePath } from '../fs.ts';
import {
  type AndOr,
  type Command,
  type Pipeline,
  parse,
  type Redirect,
  type Script,
  type Word,
} from './parser.ts';
import { concatBytes, StdinReader } from './stdin.ts';
import { ShellSyntaxError } from './tokenizer.ts';

export const SHELL_PATH = '/system/bin/sh';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Thrown by `exit` to unwind to the top of the script (or of a subshell). */
class ExitSignal {
  constructor(readonly status: number) {}
}

interface Sink {
  write(data: string | Uint8Array): void;
}

/** Output of one redirection to a file: truncated on open, written at the end of the command. */
class FileSink implements Sink {
  readonly #chunks: Uint8Array[] = [];
  constructor(
    readonly path: string,
    readonly append: boolean,
  ) {}
  write(data: string | Uint8Array): void {
    this.#chunks.push(typeof data === 'string' ? encoder.encode(data) : copy(data));
  }
  bytes(): Uint8Array {
    return concatBytes(this.#chunks);
  }
}

class BufferSink implements Sink {
  readonly chunks: Uint8Array[] = [];
  write(data: string | Uint8Array): void {
    this.chunks.push(typeof data === 'string' ? encoder.encode(data) : copy(data));
  }
  bytes(): Uint8Array {
    return concatBytes(this.chunks);
  }
}

function copy(data: Uint8Array): Uint8Array {
  return new Uint8Array(data);
}

interface Frame {
  stdout: Sink;
  stderr: Sink;
  stdin: StdinReader;
  signal: AbortSignal;
  /** Set inside a background job: the process it is registered as. */
  job?: Job;
}

/** A background job's entry in the device's process table. */
interface Job {
  readonly pid: number;
  /** The job `exec`s a command: its command line becomes that command's. */
  rename(cmdline: string): void;
  /** Run `kill` too when the job is killed (a process the job's command registered). */
  onKill(kill: () => void): void;
}

const DISCARD: Sink = { write: () => {} };

export interface ShellOptions {
  android: AndroidRuntime;
  commands: ReadonlyMap<string, CommandFn>;
  env?: Record<string, string>;
  /** The pid of this shell (a subshell shares its parent's `$$`); default a fresh one. */
  pid?: number;
}

const DEFAULT_ENV: Record<string, string> = {
  ANDROID_DATA: '/data',
  ANDROID_ROOT: '/system',
  ANDROID_STORAGE: '/storage',
  EXTERNAL_STORAGE: '/sdcard',
  HOME: '/',
  HOSTNAME: 'localhost',
  LOGNAME: 'shell',
  PATH: '/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin',
  SHELL: SHELL_PATH,
  TMPDIR: '/data/local/tmp',
  USER: 'shell',
};

/** One shell process: its variables, `$?` and working directory. */
export class Shell {
  readonly #android: AndroidRuntime;
  readonly #commands: ReadonlyMap<string, CommandFn>;
  readonly #vars: Map<string, string>;
  readonly #exported: Set<string>;
  #status = 0;
  #cwd = '/';
  #argv0 = SHELL_PATH;
  /** This shell's pid (`$$`), fresh per shell process. */
  #pid: number;
  /** This shell's command line, as `ps` shows it. */
  #cmdline = SHELL_PATH;
  /** The pid of the last background job (`$!`). */
  #lastJob: number | undefined;

  constructor(options: ShellOptions) {
    this.#android = options.android;
    this.#commands = options.commands;
    const env = { ...DEFAULT_ENV, ...options.env };
    this.#vars = new Map(Object.entries(env));
    this.#exported = new Set(Object.keys(env));
    this.#pid = options.pid ?? options.android.device.allocatePid();
  }

  /** This shell's pid, as `$$` expands and `ps` lists it. */
  get pid(): number {
    return this.#pid;
  }

  /** Run a script (the `-c` string); prints syntax errors like mksh. Resolves to the exit status. */
  async run(source: string, io: ShellIO, stdin: StdinReader): Promise<number> {
    this.#cmdline = `${SHELL_PATH} -c ${source}`;
    const frame: Frame = {
      stdout: { write: (d) => io.stdout(d) },
      stderr: stderrSink(io),
      stdin,
      signal: io.signal,
    };
    return this.#runSource(source, frame);
  }

  /** Run an argv directly (no parsing), as `exec:`/`abb_exec:` do. */
  async runArgv(argv: string[], io: ShellIO, stdin: StdinReader): Promise<number> {
    const frame: Frame = {
      stdout: { write: (d) => io.stdout(d) },
      stderr: stderrSink(io),
      stdin,
      signal: io.signal,
    };
    try {
      return await this.#invoke(argv, new Map(), frame);
    } catch (error) {
      if (error instanceof ExitSignal) return error.status;
      throw error;
    }
  }

  async #runSource(source: string, frame: Frame): Promise<number> {
    let script: Script;
    try {
      script = parse(source);
    } catch (error) {
      if (error instanceof ShellSyntaxError) {
        frame.stderr.write(`${this.#argv0}: ${error.message}\n`);
        this.#status = 1;
        return 1;
      }
      throw error;
    }
    try {
      return await this.#runScript(script, frame);
    } catch (error) {
      if (error instanceof ExitSignal) {
        this.#status = error.status;
        return error.status;
      }
      throw error;
    }
  }

  async #runScript(script: Script, frame: Frame): Promise<number> {
    for (const andOr of script) {
      if (frame.signal.aborted) break;
      if (andOr.background) {
        this.#startJob(andOr);
        this.#status = 0;
      } else await this.#runAndOr(andOr, frame);
    }
    return this.#status;
  }

  /**
   * What `ps` shows for a job before its command runs: the first command's words with variables
   * expanded (`nohup` left out, as it `exec`s its command); the exact argv replaces it once it runs.
   */
  #jobCmdline(andOr: AndOr): string {
    const first = andOr.first.commands[0];
    if (first?.kind !== 'simple') return this.#argv0;
    const words = first.words.map((word) =>
      word
        .map((part) =>
          part.type === 'text' ? part.value : part.type === 'param' ? this.#param(part.name) : '',
        )
        .join(''),
    );
    while (words[0] === 'nohup') words.shift();
    return words.length === 0 ? this.#argv0 : words.join(' ');
  }

  /** Start `andOr` as a background job; it is not awaited. */
  #startJob(andOr: AndOr): void {
    const controller = new AbortController();
    const kills: Array<() => void> = [];
    const proc = this.#android.device.startProcess(
      this.#jobCmdline(andOr),
      () => {
        for (const kill of kills) kill();
        controller.abort(new Error('killed'));
      },
      this.#pid,
    );
    const job: Job = { pid: proc.pid, rename: proc.rename, onKill: (kill) => kills.push(kill) };
    this.#lastJob = proc.pid;
    const sub = this.#fork();
    const detached: Frame = {
      stdout: DISCARD,
      stderr: DISCARD,
      stdin: new StdinReader(),
      signal: controller.signal,
      job,
    };
    void sub
      .#runAndOr({ ...andOr, background: false }, detached)
      .catch(() => undefined)
      .finally(() => proc.exited());
  }

  async #runAndOr(andOr: AndOr, frame: Frame): Promise<void> {
    this.#status = await this.#runPipeline(andOr.first, frame);
    for (const { op, pipeline } of andOr.rest) {
      if (op === '&&' ? this.#status !== 0 : this.#status === 0) continue;
      this.#status = await this.#runPipeline(pipeline, frame);
    }
  }

  async #runPipeline(pipeline: Pipeline, frame: Frame): Promise<number> {
    let stdin = frame.stdin;
    let status = 0;
    for (const [index, command] of pipeline.commands.entries()) {
      const last = index === pipeline.commands.length - 1;
      if (last) {
        status = await this.#runCommand(command, { ...frame, stdin });
      } else {
        const buffer = new BufferSink();
        status = await this.#runCommand(command, { ...frame, stdin, stdout: buffer });
        stdin = StdinReader.fromBytes(buffer.bytes());
      }
    }
    return pipeline.negate ? (status === 0 ? 1 : 0) : status;
  }

  async #runCommand(command: Command, frame: Frame): Promise<number> {
    const redirected = await this.#applyRedirects(command.redirects, frame);
    if (redirected === undefined) return 1;
    const { frame: inner, files } = redirected;
    try {
      if (command.kind === 'group') {
        if (!command.subshell) return await this.#runScript(command.body, inner);
        const sub = this.#fork();
        try {
          return await sub.#runScript(command.body, inner);
        } catch (error) {
          if (error instanceof ExitSignal) return error.status;
          throw error;
        }
      }
      const argv: string[] = [];
      for (const word of command.words) argv.push(...(await this.#expandFields(word, inner)));
      const assignments = new Map<string, string>();
      for (const { name, value } of command.assignments)
        assignments.set(name, await this.#expandJoined(value, inner));
      if (argv.length === 0) {
        for (const [name, value] of assignments) this.#vars.set(name, value);
        return this.#status;
      }
      return await this.#invoke(argv, assignments, inner);
    } finally {
      this.#flush(files, frame);
    }
  }

  /** Run a command by name with per-command variable assignments. */
  async #invoke(argv: string[], assignments: Map<string, string>, frame: Frame): Promise<number> {
    const [name, ...args] = argv;
    if (name === undefined) return 0;
    frame.job?.rename(argv.join(' '));
    const failed = simulatedFailure(
      name.slice(name.lastIndexOf('/') + 1),
      io(frame),
      this.#android.device.faults,
    );
    if (failed !== undefined) return failed;
    const builtin = this.#builtin(name);
    if (builtin !== undefined) return builtin(args, frame);
    const command = this.#lookup(name);
    if (command === undefined) {
      frame.stderr.write(`${this.#argv0}: ${name}: inaccessible or not found\n`);
      return 127;
    }
    const env = new Map<string, string>();
    for (const key of this.#exported) {
      const value = this.#vars.get(key);
      if (value !== undefined) env.set(key, value);
    }
    for (const [key, value] of assignments) env.set(key, value);
    const ctx: CommandContext = {
      io: io(frame),
      stdin: frame.stdin,
      env,
      cwd: this.#cwd,
      android: this.#android,
      shell: { pid: this.#pid, cmdline: this.#cmdline },
      detached: frame.job !== undefined,
      runArgv: (next) => this.#invoke(next, new Map(), frame),
      startProcess: (cmdline, kill) => {
        const job = frame.job;
        if (job === undefined) return this.#android.device.startProcess(cmdline, kill, this.#pid);
        job.rename(cmdline);
        job.onKill(kill);
        return { pid: job.pid, exited: () => undefined };
      },
      runScript: (source, argv0) => {
        // A child shell: sees only the exported environment plus this command's assignments.
        const sub = this.#fork();
        sub.#vars.clear();
        sub.#exported.clear();
        for (const [key, value] of env) {
          sub.#vars.set(key, value);
          sub.#exported.add(key);
        }
        sub.#status = 0;
        sub.#pid = this.#android.device.allocatePid();
        if (argv0 !== undefined) sub.#argv0 = argv0;
        return sub.#runSource(source, frame);
      },
    };
    return command(args, ctx);
  }

  #lookup(name: string): CommandFn | undefined {
    const direct = this.#commands.get(name);
    if (direct !== undefined && !name.includes('/')) return direct;
    const match = /^\/(?:system\/(?:x?bin)|vendor\/bin|product\/bin)\/([^/]+)$/.exec(
      normalizePath(name, this.#cwd),
    );
    return match === null ? undefined : this.#commands.get(match[1] as string);
  }

  #builtin(name: string): ((args: string[], frame: Frame) => Promise<number>) | undefined {
    switch (name) {
      case 'exit':
        return async (args, frame) => {
          const arg = args[0];
          if (arg === undefined) throw new ExitSignal(this.#status);
          if (!/^-?[0-9]+$/.test(arg)) {
            frame.stderr.write(`${this.#argv0}: exit: ${arg}: bad number\n`);
            throw new ExitSignal(1);
          }
          throw new ExitSignal(Number(arg) & 0xff);
        };
      case ':':
        return async () => 0;
      case 'cd':
        return async (args, frame) => {
          const target = normalizePath(args[0] ?? this.#vars.get('HOME') ?? '/', this.#cwd);
          const stat = this.#android.fs.stat(target);
          if (stat === undefined || stat.type !== 'dir') {
            frame.stderr.write(
              `${this.#argv0}: cd: ${target}: ${stat === undefined ? 'No such file or directory' : 'Not a directory'}\n`,
            );
            return 2;
          }
          this.#cwd = target;
          this.#vars.set('PWD', target);
          return 0;
        };
      case 'pwd':
        return async (_args, frame) => {
          frame.stdout.write(`${this.#cwd}\n`);
          return 0;
        };
      case 'export':
        return async (args) => {
          for (const arg of args) {
            const eq = arg.indexOf('=');
            const key = eq < 0 ? arg : arg.slice(0, eq);
            if (eq >= 0) this.#vars.set(key, arg.slice(eq + 1));
            this.#exported.add(key);
          }
          return 0;
        };
      case 'unset':
        return async (args) => {
          for (const arg of args) {
            this.#vars.delete(arg);
            this.#exported.delete(arg);
          }
          return 0;
        };
      case 'exec':
        return async (args, frame) => {
          if (args.length === 0) return 0;
          throw new ExitSignal(await this.#invoke(args, new Map(), frame));
        };
      case 'eval':
        return async (args, frame) => this.#runSource(args.join(' '), frame);
      default:
        return undefined;
    }
  }

  #fork(): Shell {
    const sub = new Shell({ android: this.#android, commands: this.#commands, pid: this.#pid });
    sub.#vars.clear();
    for (const [k, v] of this.#vars) sub.#vars.set(k, v);
    sub.#exported.clear();
    for (const k of this.#exported) sub.#exported.add(k);
    sub.#status = this.#status;
    sub.#cwd = this.#cwd;
    sub.#argv0 = this.#argv0;
    sub.#cmdline = this.#cmdline;
    return sub;
  }

  // ---- redirections ----

  async #applyRedirects(
    redirects: Redirect[],
    frame: Frame,
  ): Promise<{ frame: Frame; files: FileSink[] } | undefined> {
    if (redirects.length === 0) return { frame, files: [] };
    const fds = new Map<number, Sink>([
      [1, frame.stdout],
      [2, frame.stderr],
    ]);
    let stdin = frame.stdin;
    const files: FileSink[] = [];
    for (const redirect of redirects) {
      const target = await this.#expandJoined(redirect.target, frame);
      const path = normalizePath(target, this.#cwd);
      if (redirect.op === '>&' || redirect.op === '<&') {
        if (/^[0-9]$/.test(target)) {
          const source = fds.get(Number(target));
          if (Number(target) === 0 && redirect.op === '<&') continue;
          if (source === undefined) {
            frame.stderr.write(`${this.#argv0}: ${target}: bad file descriptor\n`);
            return undefined;
          }
          fds.set(redirect.fd, source);
          continue;
        }
        if (target === '-') {
          fds.set(redirect.fd, { write: () => {} });
          continue;
        }
      }
      if (redirect.op === '<' || redirect.op === '<&') {
        try {
          const bytes = this.#android.fs.read(path);
          if (redirect.fd === 0) stdin = StdinReader.fromBytes(bytes);
        } catch (error) {
          if (!(error instanceof FsError)) throw error;
          frame.stderr.write(`${this.#argv0}: can't open ${target}: ${error.message}\n`);
          return undefined;
        }
        continue;
      }
      const append = redirect.op === '>>';
      try {
        if (!append || this.#android.fs.stat(path) === undefined)
          this.#android.fs.write(path, new Uint8Array(0));
        else if (this.#android.fs.stat(path)?.type === 'dir') throw new FsError('EISDIR');
      } catch (error) {
        if (!(error instanceof FsError)) throw error;
        frame.stderr.write(`${this.#argv0}: can't create ${target}: ${error.message}\n`);
        return undefined;
      }
      const sink = new FileSink(path, append);
      files.push(sink);
      fds.set(redirect.fd, sink);
      if (redirect.op === '>&') fds.set(2, sink);
    }
    return {
      frame: { ...frame, stdout: fds.get(1) ?? frame.stdout, stderr: fds.get(2) ?? frame.stderr, stdin },
      files,
    };
  }

  #flush(files: FileSink[], frame: Frame): void {
    for (const file of files) {
      const bytes = file.bytes();
      if (bytes.byteLength === 0) continue;
      try {
        this.#android.fs.write(file.path, bytes, { append: true });
      } catch (error) {
        if (!(error instanceof FsError)) throw error;
        frame.stderr.write(`${this.#argv0}: can't create ${file.path}: ${error.message}\n`);
      }
    }
  }

  // ---- expansion ----

  #param(name: string): string {
    switch (name) {
      case '?':
        return String(this.#status);
      case '$':
        return String(this.#pid);
      case '#':
        return '0';
      case '0':
        return this.#argv0;
      case '-':
        return 'h';
      case '!':
        return this.#lastJob === undefined ? '' : String(this.#lastJob);
      case '@':
      case '*':
        return '';
      default:
        return this.#vars.get(name) ?? '';
    }
  }

  async #substitute(source: string, frame: Frame): Promise<string> {
    const sub = this.#fork();
    const out = new BufferSink();
    await sub.#runSource(source, { ...frame, stdout: out, stdin: new StdinReader() });
    this.#status = sub.#status;
    return decoder.decode(out.bytes()).replace(/\n+$/, '');
  }

  /** Expand a word without field splitting or globbing (assignments, redirection targets). */
  async #expandJoined(word: Word, frame: Frame): Promise<string> {
    let out = '';
    for (const part of word) {
      if (part.type === 'text') out += part.value;
      else if (part.type === 'param') out += this.#param(part.name);
      else out += await this.#substitute(part.source, frame);
    }
    return out;
  }

  /** Expand a word into fields: unquoted expansions split on whitespace, unquoted globs match files. */
  async #expandFields(word: Word, frame: Frame): Promise<string[]> {
    const fields: Array<{ text: string; glob: boolean[]; keep: boolean }> = [];
    let current: { text: string; glob: boolean[]; keep: boolean } | undefined;
    const ensure = (): { text: string; glob: boolean[]; keep: boolean } => {
      if (current === undefined) {
        current = { text: '', glob: [], keep: false };
        fields.push(current);
      }
      return current;
    };
    const append = (text: string, globbable: boolean): void => {
      const field = ensure();
      field.text += text;
      for (let i = 0; i < text.length; i++) field.glob.push(globbable);
    };
    for (const part of word) {
      if (part.type === 'text') {
        const field = ensure();
        if (part.quoted) field.keep = true;
        append(part.value, !part.quoted);
        continue;
      }
      const value =
        part.type === 'param' ? this.#param(part.name) : await this.#substitute(part.source, frame);
      if (part.quoted) {
        ensure().keep = true;
        append(value, false);
        continue;
      }
      const pieces = value.split(/[ \t\n]+/);
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) current = undefined;
        if (piece !== '') {
          ensure().keep = true;
          append(piece, false);
        }
      }
    }
    const result: string[] = [];
    for (const field of fields) {
      if (!field.keep && field.text === '') continue;
      if (field.glob.some((g, i) => g && '*?['.includes(field.text[i] as string))) {
        const matches = this.#glob(field.text, field.glob);
        if (matches.length > 0) {
          result.push(...matches);
          continue;
        }
      }
      result.push(field.text);
    }
    return result;
  }

  #glob(text: string, mask: boolean[]): string[] {
    const absolute = text.startsWith('/');
    const components: Array<{ text: string; mask: boolean[] }> = [];
    let start = 0;
    for (let i = 0; i <= text.length; i++) {
      if (i === text.length || text[i] === '/') {
        if (i > start) components.push({ text: text.slice(start, i), mask: mask.slice(start, i) });
        start = i + 1;
      }
    }
    let paths = [absolute ? '/' : ''];
    for (const component of components) {
      const pattern = globRegExp(component.text, component.mask);
      const next: string[] = [];
      for (const base of paths) {
        const join = (name: string): string =>
          base === '' ? name : base === '/' ? `/${name}` : `${base}/${name}`;
        if (pattern === undefined) {
          next.push(join(component.text));
          continue;
        }
        const dir = normalizePath(base === '' ? '.' : base, this.#cwd);
        const entries = this.#android.fs.list(dir) ?? [];
        for (const { name } of entries) {
          if (name.startsWith('.') && !component.text.startsWith('.')) continue;
          if (pattern.test(name)) next.push(join(name));
        }
      }
      paths = next;
    }
    return paths.filter((p) => this.#android.fs.stat(normalizePath(p, this.#cwd)) !== undefined).sort();
  }
}

/** A command's view of a frame's output. */
function io(frame: Frame): ShellIO {
  return {
    stdout: (d) => frame.stdout.write(d),
    stderr: (d) => frame.stderr.write(d),
    signal: frame.signal,
  };
}

function stderrSink(io: ShellIO): Sink {
  return { write: (d) => io.stderr(d) };
}

/** A RegExp for one path component, or undefined when it has no unquoted glob characters. */
function globRegExp(text: string, mask: boolean[]): RegExp | undefined {
  let source = '';
  let special = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (mask[i] === true && c === '*') {
      source += '.*';
      special = true;
    } else if (mask[i] === true && c === '?') {
      source += '.';
      special = true;
    } else if (mask[i] === true && c === '[') {
      const close = text.indexOf(']', i + 2);
      if (close < 0) {
        source += '\\[';
        continue;
      }
      let set = text.slice(i + 1, close);
      if (set.startsWith('!')) set = `^${set.slice(1)}`;
      source += `[${set.replace(/[\\\]]/g, '\\$&')}]`;
      special = true;
      i = close;
    } else {
      source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  if (!special) return undefined;
  try {
    return new RegExp(`^${source}$`, 's');
  } catch {
    return undefined;
  }
}
