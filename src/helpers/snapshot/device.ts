/**
 * What the helper driver needs from a device: shell (complete and streamed), push, forwards (through
 * the ledger) and per-device locks. Built over AdbClient for real devices.
 */
import type { Duplex } from 'node:stream';
import type { AdbClient, ShellOptions, ShellResult, ShellStream } from '../../adb/client.ts';
import type { Deadline } from '../../adb/deadline.ts';
import type { DeviceLocks } from '../../adb/device-lock.ts';
import type { ForwardEntry, ForwardLedger } from '../../adb/forward-ledger.ts';
import { type ForwardTarget, forwardTarget } from '../../adb/forward-target.ts';

export interface HelperDevice {
  readonly serial: string;
  /** Where the bridge connects to reach a forward's local side (a unix socket or host:port). */
  forwardTarget(entry: ForwardEntry): ForwardTarget;
  shell(command: string, options?: ShellOptions): Promise<ShellResult>;
  shellStream(command: string, options?: ShellOptions): Promise<ShellStream>;
  /** `exec:COMMAND` (what `adb exec-out` runs): its raw output as it comes, no exit status. */
  execStream(command: string, deadline?: Deadline): Promise<Duplex>;
  push(localPath: string, remotePath: string, deadline?: Deadline): Promise<void>;
  openForward(owner: string, remote: string, deadline?: Deadline): Promise<ForwardEntry>;
  closeForward(entry: ForwardEntry): Promise<void>;
  /** Whether the adb server still has the forward; one it lost is forgotten by the ledger. */
  checkForward(entry: ForwardEntry, deadline?: Deadline): Promise<boolean>;
  readonly locks: DeviceLocks;
}

export function adbHelperDevice(options: {
  client: AdbClient;
  serial: string;
  ledger: ForwardLedger;
  locks: DeviceLocks;
}): HelperDevice {
  const { client, serial, ledger, locks } = options;
  return {
    serial,
    forwardTarget: (entry) => forwardTarget(entry.local, client.host),
    locks,
    shell: (command, opts) => client.shell(serial, command, opts),
    shellStream: (command, opts) => client.shellStream(serial, command, opts),
    execStream: (command, deadline) => client.openService(serial, `exec:${command}`, deadline ?? {}),
    push: (local, remote, deadline) => client.push(serial, local, remote, deadline ?? {}),
    openForward: (owner, remote, deadline) => ledger.openReachable(owner, serial, remote, deadline),
    closeForward: (entry) => ledger.close(entry.serial, entry.local),
    checkForward: (entry, deadline) => ledger.verify(entry, deadline),
  };
}
