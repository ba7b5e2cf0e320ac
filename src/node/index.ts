/** One bridge node: the composition root (`startNode`), its device side and its device sources. */
export { attachDeviceNode, type DeviceNode, type DeviceNodeOptions, startDeviceNode } from './device-node.ts';
export type { DeviceSource, SourceDevice, StartedSource } from './device-source.ts';
export { type RunningNode, type StartNodeOptions, startNode } from './start.ts';
