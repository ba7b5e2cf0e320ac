/**
 * The one entry to a device's live screen: `openScreenSource(device, options)` starts the glass
 * agent's encoder when a release of the agent is given (agent-source.ts) and falls back to
 * `screenrecord` (screenrecord-source.ts) when the agent cannot encode — its process exits with an
 * error, or no session header comes within the bound — or when no agent is given. An encoder that
 * started is kept going (recovering-source.ts): when it dies mid-stream it is started again, a few
 * times at most, and then screenrecord takes over, with no end for the reader. The source's
 * `start` events carry `source: 'agent' | 'screenrecord'` and the codec string read from the SPS
 * (`info.codecString`). `close()` stops the device process and removes the forward.
 *
 * Packets: a CONFIG packet (SPS and PPS alone) comes before every key frame that the device sent
 * them with, and at least before the first; a viewer joining later needs the last CONFIG before a
 * key frame (the relay keeps it).
 */
import { isBridgeError } from '../../errors.ts';
import type { AppProcessJarManifest } from '../../manifest/index.ts';
import type { Logger } from '../../observability/logger.ts';
import type { HelperDevice } from '../snapshot/device.ts';
import { AgentCannotEncode, AgentScreenSource } from './agent-source.ts';
import { RecoveringScreenSource } from './recovering-source.ts';
import { ScreenrecordSource } from './screenrecord-source.ts';
import type { ScreenSource, ScreenStreamOptions } from './source.ts';

export const SCREEN_DEFAULTS = { maxSize: 1280, bitRate: 4_000_000, maxFps: 30 } as const;

export interface OpenScreenOptions extends ScreenStreamOptions {
  /** Who owns the forward in the ledger (the lease id). */
  owner: string;
  /** The glass agent's release and its jar on this host (verified); absent: screenrecord only. */
  agent?: { manifest: AppProcessJarManifest; jarPath: string };
  logger?: Logger;
  /** How long the agent's session header may take (default 8 s) before falling back. */
  agentHeaderTimeoutMs?: number;
  /** screenrecord's `--time-limit` per recording, seconds (default and at most 180). */
  screenrecordTimeLimitS?: number;
  /** Start the next recording this long before the limit (default 5 s). */
  screenrecordRestartLeadMs?: number;
  /** How many times an encoder that died is started again within `agentRestartWindowMs` (default 2). */
  agentRestarts?: number;
  /** Default 60 s. */
  agentRestartWindowMs?: number;
}

export async function openScreenSource(
  device: HelperDevice,
  options: OpenScreenOptions,
): Promise<ScreenSource> {
  const stream = {
    maxSize: options.maxSize ?? SCREEN_DEFAULTS.maxSize,
    bitRate: options.bitRate ?? SCREEN_DEFAULTS.bitRate,
    maxFps: options.maxFps ?? SCREEN_DEFAULTS.maxFps,
  };
  const startScreenrecord = () =>
    ScreenrecordSource.start(device, {
      ...stream,
      ...(options.screenrecordTimeLimitS === undefined ? {} : { timeLimitS: options.screenrecordTimeLimitS }),
      ...(options.screenrecordRestartLeadMs === undefined
        ? {}
        : { restartLeadMs: options.screenrecordRestartLeadMs }),
    });
  const agent = options.agent;
  if (agent === undefined) return startScreenrecord();
  const startAgent = async () => {
    const source = await AgentScreenSource.start(device, {
      ...stream,
      owner: options.owner,
      manifest: agent.manifest,
      jarPath: agent.jarPath,
      ...(options.agentHeaderTimeoutMs === undefined
        ? {}
        : { headerTimeoutMs: options.agentHeaderTimeoutMs }),
    });
    if (source.stoppedStale) {
      options.logger?.info(
        { serial: device.serial },
        'live screen: stopped a screen encoder an earlier stream left running',
      );
    }
    return source;
  };
  let first: AgentScreenSource;
  try {
    first = await startAgent();
  } catch (err) {
    if (!cannotEncode(err)) throw err;
    options.logger?.warn(
      { serial: device.serial, err: (err as Error).message },
      'live screen: the glass agent cannot encode; falling back to screenrecord',
    );
    return startScreenrecord();
  }
  return new RecoveringScreenSource(first, {
    serial: device.serial,
    startAgent,
    startScreenrecord,
    ...(options.agentRestarts === undefined ? {} : { restarts: options.agentRestarts }),
    ...(options.agentRestartWindowMs === undefined ? {} : { restartWindowMs: options.agentRestartWindowMs }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}

const cannotEncode = (err: unknown): boolean =>
  err instanceof AgentCannotEncode || (isBridgeError(err) && err.code === 'COMPANION_UNSUPPORTED');
