/**
 * The emulated screen as a live H.264 stream: the screen model rendered (render.ts, as `screencap`
 * draws it) whenever it changes — the UI document or the touches shown — scaled to the encoded size
 * and fed to one ffmpeg encoder (encoder.ts) at most `maxFps` times a second.
 *
 * Two behaviours, as the two device sources have them: the glass agent's encoder (`repeat`) sends
 * a picture at once and repeats the last frame while the screen is idle, so a new viewer gets a
 * picture; `screenrecord` sends nothing until the screen changes, and nothing while it is idle.
 * `fit: 'letterbox'` keeps the display's aspect ratio inside a picture of another shape, with black
 * borders (screenrecord's `--size`).
 */
import type { Size } from '../../../protocol/screen/size.ts';
import { SHOWN_TOUCHES } from '../commands/screencap.ts';
import type { SimDeviceImpl } from '../device.ts';
import { H264Encoder } from './encoder.ts';
import { renderScreen, touchPoints } from './render.ts';

export { fitVideoSize } from '../../../protocol/screen/size.ts';

export interface LiveScreenOptions {
  /** The encoded picture. */
  video: Size;
  fit: 'stretch' | 'letterbox';
  maxFps: number;
  bitRate: number;
  /** Repeat the last frame while the screen is idle (the agent); false: frames only on changes. */
  repeat: boolean;
  /** While this answers true no frame is fed (the reader is behind). */
  paused?(): boolean;
  /** One Annex B access unit. */
  onUnit(unit: Uint8Array): void;
  /** The encoder died by itself (not after stop()). */
  onFailure?(error: Error): void;
}

export interface LiveScreen {
  /** Stop the frames and kill the encoder; resolves once ffmpeg has exited. Idempotent. */
  stop(): Promise<void>;
}

/** `src` (RGB, `from`) scaled into a black `to` picture: stretched, or fitted with borders. */
export function scaleRgb(src: Uint8Array, from: Size, to: Size, fit: 'stretch' | 'letterbox'): Uint8Array {
  const out = new Uint8Array(to.width * to.height * 3);
  let box = { x: 0, y: 0, width: to.width, height: to.height };
  if (fit === 'letterbox') {
    const scale = Math.min(to.width / from.width, to.height / from.height);
    const width = Math.max(1, Math.round(from.width * scale));
    const height = Math.max(1, Math.round(from.height * scale));
    box = { x: Math.floor((to.width - width) / 2), y: Math.floor((to.height - height) / 2), width, height };
  }
  const columns = new Uint32Array(box.width);
  for (let x = 0; x < box.width; x++) {
    columns[x] = Math.min(from.width - 1, Math.floor(((x + 0.5) * from.width) / box.width)) * 3;
  }
  for (let y = 0; y < box.height; y++) {
    const sy = Math.min(from.height - 1, Math.floor(((y + 0.5) * from.height) / box.height));
    const srcRow = sy * from.width * 3;
    let o = ((box.y + y) * to.width + box.x) * 3;
    for (let x = 0; x < box.width; x++) {
      const s = srcRow + (columns[x] as number);
      out[o++] = src[s] as number;
      out[o++] = src[s + 1] as number;
      out[o++] = src[s + 2] as number;
    }
  }
  return out;
}

/** What the picture depends on: the UI document (the same string until it changes) and the touches. */
function screenState(device: SimDeviceImpl): { xml: string; inputs: number } {
  return { xml: device.uiXml(), inputs: device.inputCount };
}

export function startLiveScreen(device: SimDeviceImpl, options: LiveScreenOptions): LiveScreen {
  const { video, maxFps } = options;
  let stopped = false;
  const encoder = new H264Encoder({
    width: video.width,
    height: video.height,
    fps: maxFps,
    bitRate: options.bitRate,
    gopFrames: Math.max(1, Math.round(maxFps)),
    onUnit: (unit) => {
      if (!stopped) options.onUnit(unit);
    },
    onExit: (error) => {
      if (error !== null && !stopped) options.onFailure?.(error);
    },
  });
  let shown = options.repeat ? null : screenState(device);
  let last: Uint8Array | null = null;
  const render = (): Uint8Array => {
    const display = device.displaySize();
    const touches = touchPoints(device.inputEvents()).slice(-SHOWN_TOUCHES);
    const canvas = renderScreen(display, device.uiXml(), touches);
    return scaleRgb(canvas.pixels, display, video, options.fit);
  };
  const tick = (): void => {
    if (stopped || !encoder.ready || options.paused?.() === true) return;
    const now = screenState(device);
    if (shown === null || now.xml !== shown.xml || now.inputs !== shown.inputs) {
      shown = now;
      last = render();
      encoder.write(last);
    } else if (options.repeat && last !== null) {
      encoder.write(last);
    }
  };
  const timer = setInterval(tick, 1000 / maxFps);
  timer.unref();
  queueMicrotask(tick);
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
      return encoder.close();
    },
  };
}
