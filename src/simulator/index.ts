/** Public entry of the device simulator: start devices, parse fault specs, the contract types. */
export { DEVICE_FEATURES, deviceBanner } from './adbd/connection.ts';
export {
  FAULT_NAMES,
  FaultSpecError,
  formatFaultSpecs,
  mergeFaults,
  parseFaultSpec,
  parseFaultSpecs,
} from './faults.ts';
export { type SimulatedDevice, type Simulator, type SimulatorOptions, startSimulator } from './simulator.ts';
export type {
  Faults,
  PreinstalledPackage,
  SimAndroid,
  SimAndroidOptions,
  SimDevice,
  SimFileSystem,
} from './types.ts';
