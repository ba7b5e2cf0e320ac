/**
 * Run-time fault control for `devicebridge simulate --control-port PORT`: a tiny HTTP/JSON API on
 * 127.0.0.1 (never another address) to switch faults on and off, pull and re-plug the cable, and
 * count what runs on each device. Fault values use the `--fault SPEC` syntax (one parser).
 *
 *   GET    /devices                       every device's status
 *   GET    /devices/{i}                   one device's status (i: 0-based index)
 *   PUT    /devices/{i}/faults            {"faults": ["latency-ms=50", ...]}  replace the faults
 *   PATCH  /devices/{i}/faults            {"faults": [...]}                   add or change faults
 *   DELETE /devices/{i}/faults[/{name}]   lift every fault, or one by its spec name (`latency-ms`)
 *   POST   /devices/{i}/unplug | plug | disconnect
 *
 * Status: {index, address, serial, faults: [spec...], plugged, offline, connections, listeners:
 * ["tcp:PORT", ...], runningHelpers, processes: ["PID CMDLINE", ...]}. Errors: {"error": {"code", "message"}} with 400/404/405.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { parseStrictJson } from '../strict-json.ts';
import { FAULT_KEYS, FaultSpecError, formatFaultSpecs, parseFaultSpecs } from './faults.ts';
import type { SimulatedDevice } from './simulator.ts';

/** What the control API needs of a device (a `SimulatedDevice`). */
export type ControlledDevice = Pick<
  SimulatedDevice,
  | 'address'
  | 'serial'
  | 'faults'
  | 'offline'
  | 'plugged'
  | 'connectionCount'
  | 'setFaults'
  | 'setFault'
  | 'clearFault'
  | 'unplug'
  | 'plug'
  | 'disconnectAll'
  | 'listeners'
  | 'runningHelpers'
  | 'processes'
>;

export interface ControlResponse {
  status: number;
  body: unknown;
}

/** Largest request body the control API reads. */
export const CONTROL_MAX_BODY_BYTES = 64 * 1024;

export function deviceStatus(device: ControlledDevice, index: number) {
  return {
    index,
    address: device.address,
    serial: device.serial,
    faults: formatFaultSpecs(device.faults),
    plugged: device.plugged,
    offline: device.offline,
    connections: device.connectionCount,
    listeners: device.listeners(),
    runningHelpers: device.runningHelpers(),
    processes: device.processes().map((p) => `${p.pid} ${p.cmdline}`),
  };
}

const fail = (status: number, code: string, message: string): ControlResponse => ({
  status,
  body: { error: { code, message } },
});

function faultList(bodyText: string): string[] {
  const body = parseStrictJson(bodyText === '' ? '{}' : bodyText, { maxDepth: 4 });
  const faults = (body as { faults?: unknown } | null)?.faults;
  if (!Array.isArray(faults) || !faults.every((f) => typeof f === 'string')) {
    throw new FaultSpecError('', 'the body must be {"faults": ["SPEC", ...]}');
  }
  return faults;
}

/** Answer one control request (pure over the devices; no I/O). */
export function handleControl(
  devices: readonly ControlledDevice[],
  method: string,
  path: string,
  bodyText = '',
): ControlResponse {
  const parts = path
    .split('?')[0]!
    .split('/')
    .filter((p) => p !== '');
  if (parts[0] !== 'devices' || parts.length > 4) return fail(404, 'NOT_FOUND', `no route ${path}`);
  if (parts.length === 1) {
    if (method !== 'GET') return fail(405, 'METHOD_NOT_ALLOWED', `${method} /devices`);
    return { status: 200, body: { devices: devices.map(deviceStatus) } };
  }
  const indexText = parts[1]!;
  const index = /^\d{1,4}$/.test(indexText) ? Number(indexText) : -1;
  const device = devices[index];
  if (device === undefined) return fail(404, 'NOT_FOUND', `no device ${indexText.slice(0, 16)}`);
  const ok = (): ControlResponse => ({ status: 200, body: deviceStatus(device, index) });
  const action = parts[2];
  try {
    if (action === undefined && parts.length === 2) {
      return method === 'GET' ? ok() : fail(405, 'METHOD_NOT_ALLOWED', `${method} ${path}`);
    }
    if (action === 'faults') {
      const name = parts[3];
      if (name !== undefined) {
        if (method !== 'DELETE') return fail(405, 'METHOD_NOT_ALLOWED', `${method} ${path}`);
        const key = Object.hasOwn(FAULT_KEYS, name) ? FAULT_KEYS[name] : undefined;
        if (key === undefined) return fail(404, 'NOT_FOUND', `no fault named ${name.slice(0, 32)}`);
        device.clearFault(key);
        return ok();
      }
      if (method === 'PUT') device.setFaults(parseFaultSpecs(faultList(bodyText)));
      else if (method === 'PATCH') device.setFault(parseFaultSpecs(faultList(bodyText)));
      else if (method === 'DELETE') device.clearFault();
      else if (method !== 'GET') return fail(405, 'METHOD_NOT_ALLOWED', `${method} ${path}`);
      return ok();
    }
    if (parts.length === 3 && (action === 'unplug' || action === 'plug' || action === 'disconnect')) {
      if (method !== 'POST') return fail(405, 'METHOD_NOT_ALLOWED', `${method} ${path}`);
      if (action === 'unplug') device.unplug();
      else if (action === 'plug') device.plug();
      else device.disconnectAll();
      return ok();
    }
  } catch (err) {
    if (err instanceof Error && (err instanceof FaultSpecError || err.name === 'BridgeError')) {
      return fail(400, 'INVALID_ARGUMENT', err.message);
    }
    throw err;
  }
  return fail(404, 'NOT_FOUND', `no route ${path.slice(0, 64)}`);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > CONTROL_MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface ControlServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Serve the control API on 127.0.0.1:`port` (0 = any free port). */
export async function startControlServer(
  devices: readonly ControlledDevice[],
  port: number,
): Promise<ControlServer> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const answer =
        body === undefined
          ? fail(413, 'PAYLOAD_TOO_LARGE', `body over ${CONTROL_MAX_BODY_BYTES} bytes`)
          : handleControl(devices, req.method ?? 'GET', req.url ?? '/', body);
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify(answer.body)}\n`);
    })().catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify({ error: { code: 'INTERNAL', message: err.message } })}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
