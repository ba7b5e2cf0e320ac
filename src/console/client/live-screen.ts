/**
 * The live view of a leased device's screen (docs/live-screen.md), on the Screen page and the
 * inspector: a WebSocket to /v1/leases/{id}/screen (same origin; the session cookie authenticates),
 * each access unit into a WebCodecs VideoDecoder (Annex B: configured with no description), each
 * decoded frame drawn on a canvas that keeps the picture's aspect ratio. Pointer Events (mouse, pen,
 * touch) on the canvas and keys on the focused canvas go back on the same socket, in the picture's
 * pixels. Reconnects with backoff when the socket closes without an `end`; an `end` stops the view
 * and the status line says why.
 *
 * Figures, in the stats line: fps = frames decoded in the last second; latency = from an input sent
 * to the first decoded frame after it whose picture differs from the frame before the input (sampled
 * on a 32-pixel-wide copy) — input to a changed picture, as a person sees it, not the stream's PTS lag.
 */
import type { Lease } from '../../api/leases.ts';
import {
  decodePacketMessage,
  parseScreenTextMessage,
  type ScreenInputMessage,
  ScreenMessageError,
  type ScreenPacketMessage,
  type ScreenStartMessage,
} from '../../protocol/screen/viewer-messages.ts';
import { ApiError, api } from './api.ts';
import { isLeaveKey, keyMessage, toPicture } from './screen-input.ts';

/** Reconnect delays after a network blip: doubling from 0.5 s up to 8 s; reset by a `start`. */
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];
/** Undecoded chunks allowed to queue before the view drops to the next key frame (bounded memory). */
const MAX_DECODE_QUEUE = 60;
/** Width of the copy a frame is compared on for the latency figure. */
const SAMPLE_WIDTH = 32;
/** Latencies kept for the median. */
const LATENCY_WINDOW = 20;

export interface LiveView {
  start(): void;
  stop(): void;
  readonly running: boolean;
}

export interface LiveElements {
  canvas: HTMLCanvasElement;
  /** The view's status line (role=status): connecting, streaming, why it ended. */
  status: HTMLElement;
  /** fps and latency, refreshed every second (not announced). */
  stats: HTMLElement;
  /** Start / Stop. */
  toggle: HTMLButtonElement;
  /** Where Ctrl+] moves the focus (the next control). */
  leaveTo?: HTMLElement;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

export function liveView(elements: LiveElements, lease: () => string): LiveView {
  const { canvas, status, stats, toggle } = elements;
  const ctx = canvas.getContext('2d', { alpha: false });
  const sample = document.createElement('canvas');
  const sampleCtx = sample.getContext('2d', { willReadFrequently: true });

  let socket: WebSocket | null = null;
  let decoder: VideoDecoder | null = null;
  let picture: ScreenStartMessage | null = null;
  let running = false;
  let waitForKey = true;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let frames = 0;
  let framesThisSecond = 0;
  let statsTimer: ReturnType<typeof setInterval> | undefined;
  let pointerDown: number | null = null;
  let lastPointer = { x: -1, y: -1 };
  /** An input waiting for a changed picture: when it was sent and the picture before it. */
  let pending: { sentAt: number; before: Uint8ClampedArray | null } | null = null;
  const latencies: number[] = [];

  const say = (state: string, message: string) => {
    canvas.dataset['state'] = state;
    status.textContent = message;
  };

  const showStats = () => {
    const latency =
      latencies.length === 0
        ? 'no input yet'
        : `${Math.round(latencies[latencies.length - 1] ?? 0)} ms last, ${Math.round(median(latencies))} ms median of ${latencies.length}`;
    stats.textContent = `${framesThisSecond} fps · input to changed picture: ${latency}`;
    canvas.dataset['fps'] = String(framesThisSecond);
    framesThisSecond = 0;
  };

  /** A small copy of the canvas, to tell whether the picture changed after an input. */
  const sampled = (): Uint8ClampedArray | null => {
    if (sampleCtx === null || canvas.width === 0) return null;
    sample.width = SAMPLE_WIDTH;
    sample.height = Math.max(1, Math.round((SAMPLE_WIDTH * canvas.height) / canvas.width));
    sampleCtx.drawImage(canvas, 0, 0, sample.width, sample.height);
    return sampleCtx.getImageData(0, 0, sample.width, sample.height).data;
  };
  const differs = (a: Uint8ClampedArray, b: Uint8ClampedArray): boolean => {
    if (a.length !== b.length) return true;
    // A few units of noise per channel is the encoder, not a change.
    for (let i = 0; i < a.length; i++) if (Math.abs((a[i] as number) - (b[i] as number)) > 24) return true;
    return false;
  };

  const onFrame = (frame: VideoFrame) => {
    if (ctx !== null) ctx.drawImage(frame, 0, 0, canvas.width, canvas.height);
    frame.close();
    frames++;
    framesThisSecond++;
    canvas.dataset['frames'] = String(frames);
    if (pending !== null) {
      const now = sampled();
      if (now !== null && (pending.before === null || differs(pending.before, now))) {
        latencies.push(performance.now() - pending.sentAt);
        if (latencies.length > LATENCY_WINDOW) latencies.shift();
        pending = null;
      }
    }
  };

  const closeDecoder = () => {
    if (decoder !== null && decoder.state !== 'closed') decoder.close();
    decoder = null;
  };

  const openDecoder = (start: ScreenStartMessage): void => {
    closeDecoder();
    const opened = new VideoDecoder({
      output: onFrame,
      error: (err) => {
        if (decoder !== opened) return;
        decoder = null;
        waitForKey = true;
        if (err.name === 'NotSupportedError') {
          fail(`this browser cannot decode ${start.codec} (H.264) video: ${err.message}`);
          return;
        }
        // The decoder is closed now; the next key frame opens a new one.
        say('streaming', `decoding failed (${err.message}); waiting for the next key frame`);
      },
    });
    // No description: the access units are Annex B, SPS and PPS in band before every key frame.
    opened.configure({ codec: start.codec, optimizeForLatency: true });
    decoder = opened;
    waitForKey = true;
  };

  const onStart = (start: ScreenStartMessage) => {
    picture = start;
    attempt = 0;
    // The bitmap is the picture's size; CSS (width/height auto, max-width/max-height) keeps its ratio.
    canvas.width = start.width;
    canvas.height = start.height;
    canvas.hidden = false;
    canvas.dataset['width'] = String(start.width);
    canvas.dataset['height'] = String(start.height);
    say(
      'streaming',
      `live: ${start.width}×${start.height} (display ${start.displayWidth}×${start.displayHeight}), from the ${start.source === 'agent' ? 'glass agent' : 'screenrecord'}`,
    );
    openDecoder(start);
  };

  const onUnit = (unit: ScreenPacketMessage) => {
    if (picture === null) return;
    if (waitForKey && !unit.key) return;
    // A decoder that failed is gone: the key frame opens a new one.
    if (decoder === null || decoder.state === 'closed') openDecoder(picture);
    if (decoder === null) return;
    if (!unit.key && decoder.decodeQueueSize > MAX_DECODE_QUEUE) {
      // Decoding cannot keep up: drop to the next key frame rather than queue without bound.
      waitForKey = true;
      return;
    }
    waitForKey = false;
    decoder.decode(
      new EncodedVideoChunk({ type: unit.key ? 'key' : 'delta', timestamp: unit.pts, data: unit.data }),
    );
  };

  const send = (message: ScreenInputMessage) => {
    if (socket === null || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify(message));
    // The first input not yet answered by a changed picture is the one timed.
    pending ??= { sentAt: performance.now(), before: sampled() };
  };

  /** Stops for good (an `end`, a protocol error, the Stop button): no reconnect. */
  const halt = () => {
    running = false;
    clearTimeout(retryTimer);
    clearInterval(statsTimer);
    statsTimer = undefined;
    const s = socket;
    socket = null;
    if (s !== null) {
      s.onclose = null;
      s.onmessage = null;
      s.onerror = null;
      s.close();
    }
    closeDecoder();
    picture = null;
    pending = null;
    pointerDown = null;
    toggle.textContent = 'Start live view';
    toggle.setAttribute('aria-pressed', 'false');
  };

  const fail = (message: string) => {
    halt();
    say('failed', message);
  };

  /** Closed without an `end`: a network blip (or a bridge restart); try again, waiting longer each time. */
  const retry = () => {
    if (!running) return;
    const delay = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)] as number;
    attempt++;
    say('reconnecting', `connection lost; reconnecting in ${delay / 1000} s (attempt ${attempt})`);
    retryTimer = setTimeout(connect, delay);
  };

  const connect = () => {
    const id = lease();
    if (!id) {
      halt();
      say('idle', 'no lease chosen: acquire one on the Leases page');
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/v1/leases/${encodeURIComponent(id)}/screen`);
    ws.binaryType = 'arraybuffer';
    socket = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
    };
    canvas.dataset['connections'] = String(Number(canvas.dataset['connections'] ?? '0') + 1);
    ws.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      try {
        if (typeof event.data !== 'string') {
          onUnit(decodePacketMessage(new Uint8Array(event.data)));
          return;
        }
        const m = parseScreenTextMessage(event.data);
        if (m.type === 'start') onStart(m);
        else if (m.type === 'skipped') {
          waitForKey = true;
          say('streaming', `fell behind: the bridge skipped ${m.frames} frames to the next key frame`);
        } else if (m.type === 'end') {
          halt();
          say('ended', `stream ended (${m.reason})${m.message ? `: ${m.message}` : ''}`);
        } else say('streaming', `the bridge refused an input (${m.code}): ${m.message}`);
      } catch (err) {
        if (!(err instanceof ScreenMessageError)) throw err;
        fail(`stopped: the bridge sent a message not in the documented format (${err.message})`);
      }
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      closeDecoder();
      picture = null;
      pointerDown = null;
      if (event.code === 1008 || event.code === 4401 || event.code === 4403) {
        fail(`the bridge refused the live view${event.reason ? `: ${event.reason}` : ''}`);
        return;
      }
      if (opened) {
        retry();
        return;
      }
      // Refused before it opened (a browser is told no more than that): a lease that ended, or
      // another tenant's, is not worth retrying; anything else (the bridge restarting) is.
      void api<Lease>('GET', `/v1/leases/${encodeURIComponent(id)}`).then(
        (l) => (l.state === 'active' ? retry() : fail(`lease ${id} is ${l.state}: no screen to show`)),
        (err: unknown) =>
          err instanceof ApiError && (err.status === 403 || err.status === 404)
            ? fail(`lease ${id}: ${err.message}`)
            : retry(),
      );
    };
  };

  const start = () => {
    if (running) return;
    if (typeof VideoDecoder === 'undefined') {
      say(
        'failed',
        'this browser has no WebCodecs video decoder (it offers one only over https or on localhost)',
      );
      return;
    }
    running = true;
    attempt = 0;
    toggle.textContent = 'Stop live view';
    toggle.setAttribute('aria-pressed', 'true');
    say('connecting', 'connecting…');
    statsTimer = setInterval(showStats, 1000);
    connect();
  };

  const stop = () => {
    halt();
    say('stopped', 'live view stopped');
  };

  toggle.addEventListener('click', () => (running ? stop() : start()));

  // Pointer: down, move while down, up (mouse, pen and touch alike), in the picture's pixels.
  const at = (e: PointerEvent) => toPicture(e.clientX, e.clientY, canvas.getBoundingClientRect(), picture!);
  canvas.addEventListener('pointerdown', (e) => {
    if (picture === null || !e.isPrimary || pointerDown !== null) return;
    e.preventDefault();
    // Where it landed first: focusing may scroll the page, and the picture with it.
    lastPointer = at(e);
    canvas.focus({ preventScroll: true });
    canvas.setPointerCapture(e.pointerId);
    pointerDown = e.pointerId;
    send({ type: 'pointer', action: 'down', ...lastPointer });
  });
  canvas.addEventListener('pointermove', (e) => {
    if (picture === null || e.pointerId !== pointerDown) return;
    const p = at(e);
    if (p.x === lastPointer.x && p.y === lastPointer.y) return;
    lastPointer = p;
    send({ type: 'pointer', action: 'move', ...p });
  });
  const up = (e: PointerEvent) => {
    if (e.pointerId !== pointerDown) return;
    pointerDown = null;
    if (picture === null) return;
    // The browser took the pointer over (a scroll, a gesture of its own): the finger ends, no click.
    if (e.type === 'pointercancel') send({ type: 'pointer', action: 'cancel', ...lastPointer });
    else send({ type: 'pointer', action: 'up', ...at(e) });
  };
  canvas.addEventListener('pointerup', up);
  canvas.addEventListener('pointercancel', up);

  // Keys on the focused picture go to the device; Ctrl+] moves the focus on.
  canvas.addEventListener('keydown', (e) => {
    if (isLeaveKey(e)) {
      e.preventDefault();
      (elements.leaveTo ?? toggle).focus();
      return;
    }
    if (!running) return;
    const message = keyMessage(e);
    if (message === null) return;
    e.preventDefault();
    send(message);
  });

  return {
    start,
    stop,
    get running() {
      return running;
    },
  };
}
