/** The MCP session id names its node: issued ids read back, and nothing else names a node. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newSessionId, nodeOfSessionId } from '../../src/mcp/session-id.ts';

const nodeName = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);

describe('MCP session ids', () => {
  it('an id issued by a node names that node; a bare UUID names none', () => {
    fc.assert(
      fc.property(nodeName, (node) => {
        const id = newSessionId(node);
        expect(nodeOfSessionId(id)).toBe(node);
        // What the MCP spec allows in a session id: visible ASCII only.
        expect(id).toMatch(/^[\x21-\x7e]+$/);
      }),
    );
    expect(nodeOfSessionId(newSessionId(undefined))).toBeNull();
  });

  it('whatever a client sends: a node name is read only from <node name>~<uuid>', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (raw) => {
        const node = nodeOfSessionId(raw);
        if (node !== null) {
          expect(node).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
          expect(raw.slice(node.length)).toMatch(
            /^~[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
          );
        }
      }),
    );
    fc.assert(
      fc.property(nodeName, fc.uuid(), fc.string({ minLength: 1, maxLength: 5 }), (node, uuid, junk) => {
        fc.pre(!/^[0-9a-f-]*$/.test(junk));
        expect(nodeOfSessionId(`${node}~${uuid}${junk}`)).toBeNull();
        expect(nodeOfSessionId(`${node}/x~${uuid}`)).toBeNull();
      }),
    );
    for (const bad of [
      '',
      '~',
      'node~',
      `~${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`,
      'a'.repeat(65) + '~x',
    ])
      expect(nodeOfSessionId(bad)).toBeNull();
    expect(nodeOfSessionId(`${'a'.repeat(65)}~12345678-1234-1234-1234-123456789abc`)).toBeNull();
    expect(nodeOfSessionId('node-a~12345678-1234-1234-1234-123456789abc')).toBe('node-a');
  });
});
