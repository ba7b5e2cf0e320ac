/** One MCP server (one session's): the device tools over a session's state. */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { BridgeClientError, type DeviceBridgeClient } from '../client/index.ts';
import { BRIDGE_VERSION } from '../version.ts';
import { SessionState } from './session-state.ts';
import { registerDeviceTools, type ToolCallExtra } from './tools.ts';

const INSTRUCTIONS =
  'Drive leased Android devices of a Device Bridge. acquire_device answers a leaseId; snapshot shows the ' +
  'screen as lines "ref role label flags bounds"; act with tap/type_text/press_key/swipe by ref or point; ' +
  'after the screen changes take a new snapshot (an old ref is refused); release_device when done.';

export interface McpSession {
  server: McpServer;
  state: SessionState;
}

/** A server with every device tool; `client` gives the bridge client of each call. */
export function createMcpSession(client: (extra: ToolCallExtra) => DeviceBridgeClient): McpSession {
  const server = new McpServer(
    { name: 'devicebridge', version: BRIDGE_VERSION },
    { instructions: INSTRUCTIONS, capabilities: { tools: {} } },
  );
  const state = new SessionState();
  registerDeviceTools(server, { client, state });
  return { server, state };
}

/** Release every lease the session still holds, one by one (a lease already gone is fine). */
export async function releaseHeld(state: SessionState, client: DeviceBridgeClient): Promise<void> {
  for (const id of state.held()) {
    // Best effort: at the session's end nobody is left to tell; an unreleased lease still expires.
    await client.releaseLease(id).catch(() => undefined);
    state.drop(id);
  }
}

/** Renew every lease the session holds; a lease that ended is forgotten. */
export async function renewHeld(state: SessionState, client: DeviceBridgeClient): Promise<void> {
  for (const id of state.held()) {
    try {
      await client.renewLease(id);
    } catch (err) {
      // Anything else (the bridge unreachable for a moment): the next renewal tries again.
      if (err instanceof BridgeClientError && (err.code === 'NOT_FOUND' || err.code === 'LEASE_EXPIRED'))
        state.drop(id);
    }
  }
}
