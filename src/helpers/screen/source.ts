/**
 * A device's live screen as the bridge reads it, whichever way it is made (the glass agent's encoder
 * or `screenrecord`): the stream's shape, then access units. Format: docs/live-screen.md.
 */

/** What a viewer needs to set up a decoder and to map its pointer to the display. */
export interface ScreenStreamInfo {
  codec: 'h264';
  /** The encoded picture. */
  width: number;
  height: number;
  /** The display the input coordinates are in. */
  displayWidth: number;
  displayHeight: number;
  source: 'agent' | 'screenrecord';
  /**
   * The WebCodecs codec string read from the stream's SPS (`avc1.PPCCLL`, e.g. `avc1.64001f`): what
   * the WebSocket `start` message's `codec` carries. Set by the device driver (src/helpers/screen/open.ts).
   */
  codecString?: string;
}

/** One access unit (or the SPS/PPS config), Annex B. */
export interface ScreenPacket {
  /** Presentation time, microseconds. */
  pts: number;
  config: boolean;
  key: boolean;
  data: Uint8Array;
}

export type ScreenEvent =
  | { type: 'start'; info: ScreenStreamInfo }
  | { type: 'packet'; packet: ScreenPacket };

export interface ScreenStreamOptions {
  /** The longer side of the encoded picture at most this many pixels (default 1280). */
  maxSize?: number;
  /** Bits per second (default 4,000,000). */
  bitRate?: number;
  /** Frames per second at most (default 30). */
  maxFps?: number;
}

/** One device stream: a `start` event first (and again after every size change), then packets. */
export interface ScreenSource {
  events(): AsyncIterable<ScreenEvent>;
  /** Stops the device side (the encoder process, its forward); `events()` ends. Idempotent. */
  close(): Promise<void>;
}
