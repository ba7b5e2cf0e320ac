/**
 * Service dispatch for `OPEN`: maps a service name to the code that serves the stream, or
 * undefined when adbd would refuse it (unknown service, connection refused) and answer `CLSE`.
 */
import type { SimAndroid } from '../../types.ts';
import type { AdbStream } from '../stream.ts';
import type { ReverseRegistry } from './reverse.ts';
import { parseShellArgs, refuseProcess, startProcess } from './shell.ts';
import { connectSocket, parseSocketService, pipeSocket } from './socket.ts';
import { startSync } from './sync.ts';

export interface ServiceContext {
  android: SimAndroid;
  /** Negotiated maximum payload of the connection. */
  maxData: number;
  /** The connection's reverses (`reverse:` services); absent: refused. */
  reverses?: ReverseRegistry;
}

/** Serves an opened stream (the connection has already answered `OKAY`). */
export type ServiceStarter = (stream: AdbStream) => void;

const INTERACTIVE_REFUSAL = 'devicebridge simulator: interactive shell is not supported; pass a command\n';

export function resolveService(name: string, ctx: ServiceContext): ServiceStarter | undefined {
  const { android, maxData } = ctx;
  const colon = name.indexOf(':');
  if (colon < 0) return undefined;
  const head = name.slice(0, colon);
  const rest = name.slice(colon + 1);

  if (head === 'shell' || head.startsWith('shell,')) {
    const { v2 } = parseShellArgs(head.slice('shell'.length));
    const protocol = v2 ? 'shell-v2' : 'raw';
    if (rest.trim() === '') {
      return (stream) => refuseProcess(stream, INTERACTIVE_REFUSAL, protocol);
    }
    return (stream) => startProcess(android, stream, { commandLine: rest }, protocol, maxData);
  }
  if (head === 'exec') {
    return (stream) => startProcess(android, stream, { commandLine: rest }, 'raw', maxData);
  }
  if (head === 'abb_exec' || head === 'abb') {
    const argv = ['cmd', ...rest.split('\0')];
    const protocol = head === 'abb' ? 'shell-v2' : 'raw';
    return (stream) => startProcess(android, stream, { argv }, protocol, maxData);
  }
  if (head === 'reverse' && ctx.reverses !== undefined) {
    const reverses = ctx.reverses;
    return (stream) => {
      stream.write(reverses.answer(rest));
      stream.close();
    };
  }
  if (head === 'sync' && rest === '') {
    return (stream) => startSync(android.fs, stream);
  }
  const address = parseSocketService(name);
  if (address !== undefined) {
    const duplex = connectSocket(android, address);
    if (duplex === undefined) return undefined;
    return (stream) => pipeSocket(duplex, stream);
  }
  return undefined;
}
