/**
 * The one entry to a device's live screen: `openScreenSource(device, options)` starts the glass
 * agent's encoder when a release of the agent is given (agent-source.ts) and falls back to
 * `screenrecord` (screenrecord-source.ts) when the agent cannot encode — its process exits with an
 * error, or no session header comes within the bound — or when no agent is given. The source's
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
  if (options.agent !== undefined) {
    try {
      return await AgentScreenSource.start(device, {
        ...stream,
        owner: options.owner,
        manifest: options.agent.manifest,
        jarPath: options.agent.jarPath,
        ...(options.agentHeaderTimeoutMs === undefined
          ? {}
          : { headerTimeoutMs: options.agentHeaderTimeoutMs }),
      });
    } catch (err) {
      if (
        !(err instanceof AgentCannotEncode) &&
        !(isBridgeError(err) && err.code === 'COMPANION_UNSUPPORTED')
      ) {
        throw err;
      }
      options.logger?.warn(
        { serial: device.serial, err: (err as Error).message },
        'live screen: the glass agent cannot encode; falling back to screenrecord',
      );
    }
  }
  return ScreenrecordSource.start(device, {
    ...stream,
    ...(options.screenrecordTimeLimitS === undefined ? {} : { timeLimitS: options.screenrecordTimeLimitS }),
    ...(options.screenrecordRestartLeadMs === undefined
      ? {}
      : { restartLeadMs: options.screenrecordRestartLeadMs }),
  });
}
