/** The Waiting table's words (pure, no DOM: test/unit/console-waiting-format.test.ts). */
import type { LeaseSelector } from '../../devices/selector.ts';

/** A selector in words: device id, labels, SDK range (`any device` when it names nothing). */
export function describeSelector(s: LeaseSelector): string {
  const parts: string[] = [];
  if (s.deviceId !== undefined) parts.push(`device ${s.deviceId}`);
  const labels = Object.entries(s.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (labels.length > 0) parts.push(`labels ${labels.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  if (s.sdkMin !== undefined && s.sdkMax !== undefined) parts.push(`SDK ${s.sdkMin}–${s.sdkMax}`);
  else if (s.sdkMin !== undefined) parts.push(`SDK ≥ ${s.sdkMin}`);
  else if (s.sdkMax !== undefined) parts.push(`SDK ≤ ${s.sdkMax}`);
  return parts.length === 0 ? 'any device' : parts.join(' · ');
}

/** Time waited: `42 s`, `3 min 05 s`, `1 h 02 min`. */
export function waited(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}
