/**
 * `app_process` for the glass agent (and its encoder mode, `ScreenMain`: see screen-main.ts): `CLASSPATH=/data/local/tmp/glass-agent.jar app_process /
 * dev.devicebridge.glassagent.Main` (or `app_process -cp JAR / MAIN`) starts the agent emulation
 * (src/simulator/glass/agent.ts) on `localabstract:glass-agent`, as the real dex jar does, and runs
 * until the shell is closed, or, started in the background (`nohup ... &`), until killed. The jar
 * must be on the device and its dex must define the main class (read with the bridge's own dex
 * reader); other main classes are not emulated. A second agent finds the socket taken and exits 1.
 *
 * The agent drives the device model: `text` types into the screen's input target, `key`
 * backspace/del deletes its last code point (other keys are recorded only), a tap `pointer` gesture
 * (every sample within the touch slop of the first) on an editable node focuses it, and so does a
 * streamed `touch` that goes up within the slop; each `touch` event is recorded with its point as it
 * comes, so the screen shows a down and every move while the finger is still down. The clipboard
 * is the device's. The glass contract's upstream main class keeps its quirks: an unknown key name
 * is a silent success, and it has no `touch` op (an unknown op).
 * With the `glass-agent-death` fault the agent dies on the next request it reads: no reply, its
 * connections drop, the socket goes away and the shell ends with 137 (killed); with
 * `glass-agent-deaf` the same, except that its process keeps running (alive, not listening).
 */
import { parseDexJar } from '../../../protocol/apk/dex.ts';
import { GlassAgentProtocol } from '../../glass/agent.ts';
import { GlassRequestError } from '../../glass/line-protocol.ts';
import { lineServer } from '../../glass/line-server.ts';
import { type CommandFn, resolvePath, stopOnHangUp } from '../context.ts';
import { isTapGesture } from '../screen.ts';
import { SCREEN_MAIN_CLASS, screenMain } from './screen-main.ts';

/** Main classes the simulator runs as the glass agent (ours, and the upstream agent's). */
export const GLASS_AGENT_MAIN_CLASSES: ReadonlySet<string> = new Set([
  'dev.devicebridge.glassagent.Main',
  'com.fixedwidth.glassagent.Main',
]);
export const GLASS_AGENT_SOCKET = 'glass-agent';
/** What InputManager throws at a shell uid whose injection the vendor ROM blocks. */
export const INJECT_EVENTS_DENIED =
  'java.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.';
/** The upstream glass agent, whose quirks the simulator keeps. */
const UPSTREAM_MAIN_CLASS = 'com.fixedwidth.glassagent.Main';
/**
 * KEYCODE_DEL ("backspace") erases the code point before the cursor. The emulated cursor is always at
 * the end of the text, so KEYCODE_FORWARD_DEL ("del", "delete") erases nothing, as on a device.
 */
const KEYCODE_DEL = 67;
/**
 * app_process's arguments: VM options up to the first operand or `--` (`-cp PATH`/`-classpath PATH`
 * take the next argument, as app_process passes them on to ART), then the command directory and the
 * main class.
 */
function parseAppProcessArgs(argv: string[]): { classpath?: string; args: string[] } {
  let classpath: string | undefined;
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-cp' || arg === '-classpath') classpath = argv[++i];
    else if (arg === '--') {
      i++;
      break;
    } else if (!arg.startsWith('-')) break;
  }
  return { ...(classpath === undefined ? {} : { classpath }), args: argv.slice(i) };
}

export const appProcess: CommandFn = async (argv, ctx) => {
  const parsed = parseAppProcessArgs(argv);
  const args = parsed.args;
  const [, mainClass] = args;
  if (args.length < 2 || mainClass === undefined) {
    ctx.io.stderr('Usage: app_process [java-options] cmd-dir start-class-name [options]\n');
    return 1;
  }
  const classpath = parsed.classpath ?? ctx.env.get('CLASSPATH') ?? '';
  const notFound = (): number => {
    ctx.io.stderr(
      `Exception in thread "main" java.lang.ClassNotFoundException: Didn't find class "${mainClass}" on path: DexPathList[[zip file "${classpath}"]]\n`,
    );
    return 1;
  };
  const jar = classpath === '' ? undefined : ctx.android.fs.readFile(resolvePath(ctx, classpath));
  if (jar === undefined) return notFound();
  let classes: string[];
  try {
    classes = parseDexJar(jar).classes;
  } catch {
    return notFound();
  }
  if (!classes.includes(mainClass)) return notFound();
  if (mainClass === SCREEN_MAIN_CLASS) {
    return screenMain(
      args.slice(2),
      ctx,
      `app_process / ${mainClass} ${args.slice(2).join(' ')} CLASSPATH=${classpath}`,
    );
  }
  if (!GLASS_AGENT_MAIN_CLASSES.has(mainClass)) {
    ctx.io.stderr(`app_process: the simulator runs only the glass agent, not ${mainClass}\n`);
    return 1;
  }

  const device = ctx.android.device;
  /** Injection as the platform refuses it to a shell uid on MIUI / HyperOS / ColorOS (`inject-blocked`). */
  const inject = (): void => {
    if (device.faults.injectBlocked === true) throw new GlassRequestError(INJECT_EVENTS_DENIED);
  };
  // One protocol per connection: a streamed touch is its connection's, released when it ends.
  const newAgent = (): GlassAgentProtocol => {
    /** The streamed touch's down point, and a point past the touch slop once it moved that far. */
    let path: Array<{ x: number; y: number }> = [];
    return new GlassAgentProtocol(
      {
        clipboardGet: () => device.clipboard,
        clipboardSet: (text) => {
          device.clipboard = text;
        },
        pointer: (gesture, button) => {
          inject();
          device.recordInput({ type: 'glass-pointer', samples: gesture.length, button, gesture });
          device.touch(gesture);
        },
        touch: ({ action, x, y }) => {
          inject();
          // Recorded with its point, so the screen shows each down and move as it comes.
          device.recordInput({ type: 'glass-touch', action, x, y });
          if (action === 'down') path = [{ x, y }];
          else if (path.length === 1 && !isTapGesture([...path, { x, y }])) path.push({ x, y });
          // A finger that goes up within the touch slop is a tap; a cancelled one is nothing.
          if (action === 'up') device.touch(path);
          if (action === 'up' || action === 'cancel') path = [];
        },
        key: (chord) => {
          inject();
          device.recordInput({ type: 'glass-key', ...chord });
          if (chord.keyCode === KEYCODE_DEL && chord.metaState === 0) device.screen.deleteBackward();
        },
        text: (text) => {
          inject();
          device.recordInput({ type: 'glass-text', text });
          device.screen.type(text);
        },
      },
      mainClass === UPSTREAM_MAIN_CLASS
        ? { unknownKey: 'ignore', touch: false }
        : { unknownKey: 'refuse', touch: true },
    );
  };
  // Runs until the host closes the shell (the bridge's held stream) or the device goes away (both
  // unless survive-hangup), `pkill -f` kills it (then its shell sees the exit status of a SIGTERM: 143), or it dies.
  let status = 0;
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let dead = false;
  const die = (): void => {
    dead = true;
    status = 137;
    server.close();
    listener?.close();
    stop();
  };
  const server = lineServer(() => {
    const agent = newAgent();
    return {
      handle: (line) => {
        if (dead) return null;
        if (device.faults.glassAgentDeath === true) {
          delete device.faults.glassAgentDeath;
          die();
          return null;
        }
        if (device.faults.glassAgentDeaf === true) {
          // Alive but deaf: the socket and its connections go, the process runs on.
          delete device.faults.glassAgentDeaf;
          dead = true;
          server.close();
          listener?.close();
          return null;
        }
        return agent.handle(line);
      },
      // A finger left down is cancelled when its connection ends (not by a process that has ended).
      ended: () => {
        if (!dead) agent.connectionEnded();
      },
    };
  }, device.faults);
  let listener: { close(): void } | undefined;
  try {
    listener = device.listen({ abstract: GLASS_AGENT_SOCKET }, (socket) => server.accept(socket));
  } catch (err) {
    ctx.io.stderr(`Exception in thread "main" java.io.IOException: ${(err as Error).message}\n`);
    return 1;
  }
  ctx.io.stdout(`glass-agent listening on localabstract:${GLASS_AGENT_SOCKET}\n`);
  const proc = ctx.startProcess(`app_process / ${mainClass} CLASSPATH=${classpath}`, () => {
    status = 143;
    // A killed agent's socket is gone at once: the next connection is refused.
    listener?.close();
    stop();
  });
  stopOnHangUp(ctx, stop);
  await stopped;
  // The process is gone: the connections it drops take no touch release with them (a device's
  // killed agent cannot inject one either).
  dead = true;
  proc.exited();
  server.close();
  listener.close();
  return status;
};
