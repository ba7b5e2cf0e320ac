/**
 * The encoded picture's size for a display and a max size, one rule for the bridge (what it asks
 * screenrecord for) and the simulator (what its agent encodes): the display's aspect ratio kept, the
 * longer side at most `maxSize` (0: no limit), each side a multiple of 8 (encoders want whole
 * blocks), at least 8.
 */
export interface Size {
  width: number;
  height: number;
}

export function fitVideoSize(display: Size, maxSize: number): Size {
  const longer = Math.max(display.width, display.height);
  const scale = maxSize > 0 && longer > maxSize ? maxSize / longer : 1;
  const round8 = (n: number) => Math.max(8, Math.floor((n * scale) / 8) * 8);
  return { width: round8(display.width), height: round8(display.height) };
}
