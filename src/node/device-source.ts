/**
 * A device source: devices a node registers at start besides its devices file and what its adb
 * server sees by itself. The CLI passes them in (`serve --simulate` passes the simulator); the node
 * does not know what is behind one.
 */
import type { RegisterRequest } from '../devices/registry.ts';

export interface SourceDevice {
  endpoint: string;
  labels?: Record<string, string>;
  provider?: string;
}

export interface StartedSource {
  devices: SourceDevice[];
  /** Stop the source (after the node's adb side is down: its devices outlive their tunnels). */
  close(): Promise<void>;
}

export interface DeviceSource {
  /** Recorded as the devices' `source`. */
  readonly kind: NonNullable<RegisterRequest['source']>;
  /**
   * Start, once the devices file and adb discovery are done: `known` is how many devices the node
   * has by then. Null: nothing to start.
   */
  start(context: { known: number }): Promise<StartedSource | null>;
}
