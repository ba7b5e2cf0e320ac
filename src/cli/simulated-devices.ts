/**
 * Simulated devices as a device source of a node (`serve --simulate N|auto`): the CLI starts the
 * simulator and passes it in; the node registers its devices like any other (source `simulator`).
 */
import type { DeviceSource, StartedSource } from '../node/device-source.ts';
import type { Simulator } from '../simulator/index.ts';

export interface SimulatedDevices extends DeviceSource {
  /** The running simulator, once started with at least one device. */
  readonly simulator: Simulator | undefined;
}

/**
 * `count` devices; -1 (`auto`): one when the node has no device by the time sources start (the
 * embedded default of `npm start`); 0: none.
 */
export function simulatedDevices(count: number): SimulatedDevices {
  let simulator: Simulator | undefined;
  return {
    kind: 'simulator',
    get simulator() {
      return simulator;
    },
    async start({ known }): Promise<StartedSource | null> {
      const n = count === -1 ? (known === 0 ? 1 : 0) : count;
      if (n <= 0) return null;
      const { startSimulator } = await import('../simulator/index.ts');
      const started = await startSimulator({ port: 0, count: n });
      simulator = started;
      return {
        devices: started.devices.map((d, i) => ({
          endpoint: d.address,
          labels: { simulated: 'true', index: String(i) },
          provider: 'simulator',
        })),
        close: () => started.close(),
      };
    },
  };
}
