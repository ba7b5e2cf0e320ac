/**
 * `app_process` for the glass agent: `CLASSPATH=/data/local/tmp/glass-agent.jar app_process /
 * dev.devicebridge.glassagent.Main` starts the agent emulation (src/simulator/glass/agent.ts) on
 * `localabstract:glass-agent`, as the real dex jar does, and runs until the shell is closed. The jar
 * must be on the device and its dex must define the main class (read with the bridge's own dex
 * reader); other main classes are not emulated. A second agent finds the socket taken and exits 1.
 */
import { parseDexJar } from '../../../artifacts/dex.ts';
import { GlassAgentProtocol } from '../../glass/agent.ts';
import { lineServer } from '../../glass/line-server.ts';
import { type CommandFn, resolvePath } from '../context.ts';

/** Main classes the simulator runs as the glass agent (ours, and seed 001's upstream name). */
export const GLASS_AGENT_MAIN_CLASSES: ReadonlySet<string> = new Set([
  'dev.devicebridge.glassagent.Main',
  'com.fixedwidth.glassagent.Main',
]);
export const GLASS_AGENT_SOCKET = 'glass-agent';

export const appProcess: CommandFn = async (argv, ctx) => {
  const args = argv.filter((a) => !a.startsWith('-'));
  const [, mainClass] = args;
  if (args.length < 2 || mainClass === undefined) {
    ctx.io.stderr('Usage: app_process [java-options] cmd-dir start-class-name [options]\n');
    return 1;
  }
  const classpath = ctx.env.get('CLASSPATH') ?? '';
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
  if (!GLASS_AGENT_MAIN_CLASSES.has(mainClass)) {
    ctx.io.stderr(`app_process: the simulator runs only the glass agent, not ${mainClass}\n`);
    return 1;
  }

  const device = ctx.android.device;
  const agent = new GlassAgentProtocol({
    clipboardGet: () => device.clipboard,
    clipboardSet: (text) => {
      device.clipboard = text;
    },
    pointer: (gesture, button) =>
      device.recordInput({ type: 'glass-pointer', samples: gesture.length, button, gesture }),
    key: (chord) => device.recordInput({ type: 'glass-key', ...chord }),
    text: (text) => device.recordInput({ type: 'glass-text', text }),
  });
  const server = lineServer(() => (line) => agent.handle(line));
  let listener: { close(): void };
  try {
    listener = device.listen({ abstract: GLASS_AGENT_SOCKET }, (socket) => server.accept(socket));
  } catch (err) {
    ctx.io.stderr(`Exception in thread "main" java.io.IOException: ${(err as Error).message}\n`);
    return 1;
  }
  ctx.io.stdout(`glass-agent listening on localabstract:${GLASS_AGENT_SOCKET}\n`);
  // Runs until the host closes the shell (the bridge's held stream), the device goes away, or
  // `pkill -f` kills it (then its shell sees the exit status of a SIGTERM: 143).
  let killed = false;
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const proc = device.startProcess(`app_process / ${mainClass} CLASSPATH=${classpath}`, () => {
    killed = true;
    stop();
  });
  if (ctx.io.signal.aborted) stop();
  else ctx.io.signal.addEventListener('abort', stop, { once: true });
  await stopped;
  proc.exited();
  server.close();
  listener.close();
  return killed ? 143 : 0;
};
