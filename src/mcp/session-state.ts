/**
 * What one MCP session remembers: the leases it acquired and has not released (released when the
 * session ends), and per lease the nodes of the last snapshot it was shown, so that an action on a
 * ref can be checked against the screen as it is now (a stale ref is refused, never acted on).
 */
import type { CompactNode } from './compact-snapshot.ts';

/** What identifies a node on screen: its class, id, description, bounds and (unless it takes text) text. */
export function nodeSignature(node: CompactNode, editable: boolean): string {
  const b = node.bounds;
  return [
    node.className,
    node.resourceId,
    node.contentDesc,
    b === null ? '' : `${b.x},${b.y},${b.width},${b.height}`,
    editable ? '' : node.text,
  ].join('\u0000');
}

export class SessionState {
  /** Leases this session acquired and has not released, by id. */
  readonly #held = new Set<string>();
  /** Per lease: the signature of each node (by ref) of the last snapshot shown. */
  readonly #shown = new Map<string, Map<string, string>>();

  hold(leaseId: string): void {
    this.#held.add(leaseId);
  }

  drop(leaseId: string): void {
    this.#held.delete(leaseId);
    this.#shown.delete(leaseId);
  }

  held(): string[] {
    return [...this.#held];
  }

  remember(leaseId: string, signatures: Map<string, string>): void {
    this.#shown.set(leaseId, signatures);
  }

  /** The signatures of the last snapshot shown for the lease, or undefined when none was. */
  shown(leaseId: string): Map<string, string> | undefined {
    return this.#shown.get(leaseId);
  }
}
