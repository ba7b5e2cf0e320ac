/**
 * The application layer: the use cases a node offers over its device side, called by the HTTP
 * routes and the CLI alike. Built once by the composition root (`src/node/`).
 */
import type { NodeDirectory } from '../devices/nodes.ts';
import type { LeaseRoom, LeaseScopes } from '../lease-session/index.ts';
import type { DeviceService } from './device-service.ts';
import type { DoctorService } from './doctor-service.ts';
import type { GlassService } from './glass-service.ts';
import type { HelperService } from './helper-service.ts';
import type { LeaseService } from './lease-service.ts';

export interface DeviceSide {
  /** This node's name (owner of the devices it drives). */
  node: string;
  /** Where every node answers (forwarding lease-scoped calls to a device's owner). */
  nodes: NodeDirectory;
  scopes: LeaseScopes;
  leases: LeaseService;
  devices: DeviceService;
  helpers: HelperService;
  /** The glass companions of a lease: clipboard, text, keys, pointer, accessibility tree. */
  glass: GlassService;
  /** The doctor: every capability of a leased device checked, a report to send back. */
  doctor: DoctorService;
  /**
   * The lease-session room: what a lease can do on the device this node drives (the routes call its
   * farm and adb endpoint capabilities directly; helpers and glass go through the services above).
   */
  room: LeaseRoom;
}

export {
  type Caller,
  type LeaseScope,
  LeaseScopes,
  type Owner,
  refOf,
} from '../lease-session/index.ts';
export { DeviceService, type DeviceView, deviceView } from './device-service.ts';
export { DoctorService } from './doctor-service.ts';
export { GlassService } from './glass-service.ts';
export { HelperService } from './helper-service.ts';
export * from './helper-views.ts';
export { LeaseService } from './lease-service.ts';
export { type PublishInput, ReleaseService } from './release-service.ts';
