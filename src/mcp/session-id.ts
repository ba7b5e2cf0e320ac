/**
 * The id of an MCP session on `/mcp` (its `Mcp-Session-Id`) names the bridge node that holds the
 * session: `<node>~<random UUID>`. Any node of a fleet reads the node from a request's id and hands
 * the request to it (after checking the node in the node directory); a node that drives no devices
 * (no node name) issues bare UUIDs. The id is the client's word: the node read from it is only a
 * name to look up in the directory, never an address.
 */
import { randomUUID } from 'node:crypto';
import { NODE_NAME_PATTERN } from '../config.ts';

const SEPARATOR = '~';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A new session id held by `node` (none: a bare UUID). */
export function newSessionId(node: string | undefined): string {
  const random = randomUUID();
  return node === undefined ? random : `${node}${SEPARATOR}${random}`;
}

/**
 * The node an incoming session id names, or null when it names none: a bare UUID, or anything
 * that is not `<node name>~<UUID>` (such an id is no session of any node).
 */
export function nodeOfSessionId(id: string): string | null {
  const at = id.lastIndexOf(SEPARATOR);
  if (at < 0) return null;
  const node = id.slice(0, at);
  return NODE_NAME_PATTERN.test(node) && UUID.test(id.slice(at + 1)) ? node : null;
}
