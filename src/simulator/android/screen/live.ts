/**
 * The emulated screen as a live H.264 stream: the screen model rendered (render.ts, as `screencap`
 * draws it, but drawn at the encoded size) when it changes — the UI document or the touches shown —
 * and fed to one ffmpeg encoder (encoder.ts) at once, though never sooner than 1/maxFps after the
 * previous frame (frame-pacer.ts). The device says when the screen may have changed
 * (`watchScreen`); a change does not wait for the next repeat. The UI is drawn once per document:
 * a touch copies it and adds its ring.
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
import { FramePacer } from './frame-pacer.ts';
import { type Canvas, drawTouches, fitBox, renderUi, touchPoints } from './render.ts';

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

/** What the picture depends on: the UI document (the same string until it changes) and the touches. */
function screenState(device: SimDeviceImpl): { xml: string; inputs: number } {
  return { xml: device.uiXml(), inputs: device.inputCount };
}

export function startLiveScreen(device: SimDeviceImpl, options: LiveScreenOptions): LiveScreen {
  const { video, maxFps } = options;
  const interval = 1000 / maxFps;
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
    // A change that came while ffmpeg was behind goes as soon as it catches up.
    onReady: () => {
      if (!stopped && changed()) wakeIn(pacer.wait(performance.now()));
    },
    onExit: (error) => {
      if (error !== null && !stopped) options.onFailure?.(error);
    },
  });
  const display = device.displaySize();
  const box = fitBox(display, video, options.fit);
  const pacer = new FramePacer(maxFps);
  let shown = options.repeat ? null : screenState(device);
  let last: Uint8Array | null = null;
  const changed = (): boolean => {
    const now = screenState(device);
    return shown === null || now.xml !== shown.xml || now.inputs !== shown.inputs;
  };
  // The UI drawn at the encoded size, kept while the document stays the same: a touch only adds rings.
  let ui: { xml: string; canvas: Canvas } | null = null;
  const render = (): Uint8Array => {
    const xml = device.uiXml();
    if (ui?.xml !== xml) ui = { xml, canvas: renderUi(display, xml, video, box) };
    const canvas = ui.canvas.copy();
    drawTouches(canvas, touchPoints(device.inputEvents()).slice(-SHOWN_TOUCHES));
    return canvas.pixels;
  };
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  const wakeIn = (ms: number): void => {
    const at = performance.now() + ms;
    if (timer !== undefined && timerAt <= at) return;
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(step, ms);
    timer.unref();
  };
  // One step: the changed screen if it changed, else the last frame again when repeating; then wake
  // up for the next (a repeat, a change held back by the cap, or a frame the encoder could not take).
  function step(): void {
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
    if (stopped) return;
    const wait = pacer.wait(performance.now());
    if (wait > 0) {
      wakeIn(wait);
      return;
    }
    let fed = false;
    if (encoder.ready && options.paused?.() !== true) {
      if (changed()) {
        shown = screenState(device);
        last = render();
        encoder.write(last);
        fed = true;
      } else if (options.repeat && last !== null) {
        encoder.write(last);
        fed = true;
      }
    }
    if (fed) {
      const now = performance.now();
      pacer.fed(now);
      // The next slot's start: repeats keep the rate although this step ran late in its slot.
      wakeIn(pacer.wait(now));
    } else {
      wakeIn(interval);
    }
  }
  // A change is drawn and encoded at once (once the input's own handler has finished), not at the
  // next repeat: the cap alone may hold it back.
  const unwatch = device.watchScreen(() => {
    if (!stopped) wakeIn(pacer.wait(performance.now()));
  });
  queueMicrotask(step);
  return {
    stop: () => {
      stopped = true;
      unwatch();
      clearTimeout(timer);
      return encoder.close();
    },
  };
}
