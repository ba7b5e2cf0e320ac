/**
 * The glass line protocol's framing, as the bridge writes it and both sides agree on (pure): the
 * `{"hello":{"proto":1}}` banner a component sends when it is ready, one JSON request line
 * `{"id":N,"op":op,...}` per request, and the bound on a reply line. The bridge's connection
 * (helpers/glass/line-client.ts) and the simulator's components (simulator/glass/line-protocol.ts)
 * both take these from here.
 */

/** The banner, one definition for both sides. */
export const GLASS_BANNER = '{"hello":{"proto":1}}';
/** Largest reply line accepted (a11y trees of big screens are a few MB). */
export const MAX_REPLY_BYTES = 32 * 1024 * 1024;

export type GlassReply = Record<string, unknown> & { id: number; ok: true };

/**
 * One request line as the bridge writes it: `{"id":N,"op":op,...fields}` and a newline, id and op
 * first and never overridden by a field of the same name (JSON.stringify's escaping: only `"`, `\`
 * and control characters, a lone surrogate as `\uXXXX`). The contract fixture
 * (test/fixtures/contract/glass/) holds these bytes.
 */
export function encodeGlassRequest(id: number, op: string, fields: Record<string, unknown> = {}): string {
  // Written out rather than one object: an object puts integer-like keys ("0") before id and op,
  // and Object.assign would take a "__proto__" field for the prototype.
  const { id: _id, op: _op, ...rest } = fields;
  const more = JSON.stringify(rest).slice(1, -1);
  return `{"id":${JSON.stringify(id)},"op":${JSON.stringify(op)}${more === '' ? '' : `,${more}`}}\n`;
}
