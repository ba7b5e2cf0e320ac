/**
 * A stand-in for the bridge's live screen route (`GET /v1/leases/{id}/screen`, docs/live-screen.md)
 * for the console's browser tests and the screen bench: it speaks the documented WebSocket messages
 * and replays an H.264 stream made with Debian's ffmpeg (libx264, testsrc), cut into access units,
 * at the stream's frame rate. It attaches to a real listening bridge's HTTP server (the console's
 * pages, sign-in and session cookie are the real ones) and authenticates the upgrade by asking the
 * app for the lease with the same cookie.
 *
 * The WebSocket side is the least RFC 6455 a browser needs (handshake, unfragmented frames, close,
 * ping): test code, not a server for the outside.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { findNal, NAL_SPS, splitStream } from '../../src/protocol/screen/annexb.ts';
import { codecString } from '../../src/protocol/screen/sps.ts';

// ---- H.264 test stream

export interface ReplayUnit {
  key: boolean;
  /** Annex B: every NAL with a 4-byte start code; SPS/PPS before each key frame. */
  data: Buffer;
}

export interface ReplayStream {
  units: ReplayUnit[];
  codec: string;
  width: number;
  height: number;
  fps: number;
}

/** H.264 from Debian's ffmpeg: testsrc at width×height, `frames` frames, a key frame every `gop`. */
export async function encodeTestStream(
  options: { width?: number; height?: number; fps?: number; frames?: number; gop?: number } = {},
): Promise<ReplayStream> {
  const { width = 720, height = 1280, fps = 30, frames = 60, gop = 30 } = options;
  const args = [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi'],
    ...['-i', `testsrc=size=${width}x${height}:rate=${fps}`],
    ...['-frames:v', String(frames), '-pix_fmt', 'yuv420p'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', String(gop)],
    ...['-bsf:v', 'dump_extra', '-f', 'h264', '-'],
  ];
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`ffmpeg exited ${code}: ${Buffer.concat(err).toString()}`);
  const units = splitAccessUnits(Buffer.concat(out));
  const sps = units[0] === undefined ? null : findNal(units[0].data, NAL_SPS);
  if (sps === null) throw new Error('ffmpeg’s stream does not start with an SPS');
  return { units, codec: codecString(sps), width, height, fps };
}

/** The NAL units of an Annex B byte stream (start codes removed). */
/** Access units (the bridge's own splitter); parameter sets alone join the picture after them. */
export function splitAccessUnits(stream: Uint8Array): ReplayUnit[] {
  const units: ReplayUnit[] = [];
  let pending: Uint8Array[] = [];
  for (const unit of splitStream(stream)) {
    pending.push(unit.data);
    if (!unit.picture) continue;
    units.push({ key: unit.key, data: Buffer.concat(pending) });
    pending = [];
  }
  return units;
}

// ---- the least WebSocket server a browser needs

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head =
    n < 126
      ? Buffer.from([0x80 | opcode, n])
      : n < 65536
        ? Buffer.from([0x80 | opcode, 126, n >> 8, n & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), u64(n)]);
  return Buffer.concat([head, payload]);
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/** One viewer's socket, as the stand-in holds it. */
export class ReplayViewer extends EventEmitter<{ message: [unknown]; close: [] }> {
  /** Every text message the viewer sent, parsed. */
  readonly received: unknown[] = [];
  readonly lease: string;
  #socket: Duplex;
  #buffer = Buffer.alloc(0);
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  sentFrames = 0;

  constructor(socket: Duplex, lease: string) {
    super();
    this.#socket = socket;
    this.lease = lease;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('close', () => this.#gone());
    socket.on('error', () => this.#gone());
  }

  get closed(): boolean {
    return this.#closed;
  }

  sendText(message: unknown): void {
    if (!this.#closed) this.#socket.write(frame(1, Buffer.from(JSON.stringify(message))));
  }

  sendUnit(unit: ReplayUnit, pts: number): void {
    if (this.#closed) return;
    const head = Buffer.alloc(9);
    head[0] = unit.key ? 1 : 0;
    head.writeBigUInt64BE(BigInt(pts), 1);
    this.#socket.write(frame(2, Buffer.concat([head, unit.data])));
    this.sentFrames++;
  }

  /** `start`, then the stream's access units at its frame rate, looping (every loop opens with a key frame). */
  play(stream: ReplayStream, displaySize = { width: 1080, height: 1920 }): void {
    this.sendText({
      type: 'start',
      codec: stream.codec,
      width: stream.width,
      height: stream.height,
      displayWidth: displaySize.width,
      displayHeight: displaySize.height,
      source: 'agent',
    });
    let i = 0;
    const period = 1_000_000 / stream.fps;
    const next = () => {
      const unit = stream.units[i % stream.units.length] as ReplayUnit;
      this.sendUnit(unit, Math.round(i * period));
      i++;
    };
    next();
    this.#timer = setInterval(next, 1000 / stream.fps);
  }

  /** The documented end: an `end` message, then a close frame. */
  end(reason: string, message: string): void {
    this.sendText({ type: 'end', reason, message });
    this.#stopTimer();
    if (!this.#closed) this.#socket.end(frame(8, Buffer.from([0x03, 0xe8])));
  }

  /** A network blip: the TCP connection dies without `end` or a close frame. */
  drop(): void {
    this.#stopTimer();
    this.#socket.destroy();
  }

  #stopTimer() {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #gone() {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopTimer();
    this.emit('close');
  }

  #read(chunk: Buffer) {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const b = this.#buffer;
      if (b.length < 2) return;
      const opcode = (b[0] as number) & 0x0f;
      const masked = ((b[1] as number) & 0x80) !== 0;
      let length = (b[1] as number) & 0x7f;
      let at = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (b.length < 10) return;
        length = Number(b.readBigUInt64BE(2));
        at = 10;
      }
      const mask = masked ? b.subarray(at, at + 4) : null;
      if (masked) at += 4;
      if (b.length < at + length) return;
      const payload = Buffer.from(b.subarray(at, at + length));
      if (mask !== null) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
      this.#buffer = b.subarray(at + length);
      if (opcode === 1) {
        const message = JSON.parse(payload.toString('utf8')) as unknown;
        this.received.push(message);
        this.emit('message', message);
      } else if (opcode === 8) {
        this.#stopTimer();
        this.#socket.end(frame(8, payload.subarray(0, 2)));
      } else if (opcode === 9) {
        this.#socket.write(frame(10, payload));
      }
    }
  }
}

const SCREEN_PATH = /^\/v1\/leases\/([^/?]+)\/screen(?:\?|$)/;

export interface ScreenStandIn {
  /** Every viewer that connected, in order. */
  readonly viewers: ReplayViewer[];
  /** Resolves with the next viewer to connect (or the n-th, counting from 1). */
  viewer(n: number): Promise<ReplayViewer>;
  /** Upgrades refused (no session, a lease the caller cannot see). */
  readonly refused: number;
  detach(): void;
}

/**
 * Serve `/v1/leases/{id}/screen` upgrades on `server` from `stream`. `authorize` gets the upgrade's
 * request and answers whether its credentials may see the lease; every accepted viewer is played
 * the stream at once.
 */
export function attachScreenStandIn(
  server: Server,
  stream: ReplayStream,
  authorize: (req: IncomingMessage, lease: string) => Promise<boolean>,
): ScreenStandIn {
  const viewers: ReplayViewer[] = [];
  const waiting = new Map<number, Array<(v: ReplayViewer) => void>>();
  let refused = 0;
  const onUpgrade = (req: IncomingMessage, socket: Duplex) => {
    const match = SCREEN_PATH.exec(req.url ?? '');
    const key = req.headers['sec-websocket-key'];
    if (match === null || typeof key !== 'string') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    const lease = decodeURIComponent(match[1] as string);
    void authorize(req, lease).then((ok) => {
      if (!ok) {
        refused++;
        socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
        return;
      }
      const accept = createHash('sha1').update(`${key}${GUID}`).digest('base64');
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
      );
      const viewer = new ReplayViewer(socket, lease);
      viewers.push(viewer);
      for (const resolve of waiting.get(viewers.length) ?? []) resolve(viewer);
      waiting.delete(viewers.length);
      viewer.play(stream);
    });
  };
  server.on('upgrade', onUpgrade);
  return {
    viewers,
    get refused() {
      return refused;
    },
    viewer(n: number) {
      const have = viewers[n - 1];
      if (have !== undefined) return Promise.resolve(have);
      return new Promise((resolve) => waiting.set(n, [...(waiting.get(n) ?? []), resolve]));
    },
    detach() {
      server.off('upgrade', onUpgrade);
      for (const v of viewers) v.drop();
    },
  };
}
