/**
 * The emulated helper's cut of a uiautomator document to maxDepth/maxNodes writes what the real
 * helper's XmlSerializer-style writer does: a kept node whose children were all cut is a leaf
 * (`<node ... />`), never `<node ...></node>`.
 */
import { describe, expect, it } from 'vitest';
import { captureUiXml } from '../../src/simulator/helper/ui-capture.ts';

const DOC = (body: string): string => `<?xml version='1.0' ?><hierarchy rotation="0">${body}</hierarchy>`;

describe('captureUiXml cuts', () => {
  it('maxDepth: the node at the limit becomes a leaf', () => {
    const xml = DOC('<node index="0" a="1"><node index="0" b="2"><node index="0" c="3" /></node></node>');
    const cut = captureUiXml(xml, 1, 100);
    expect(cut.xml).toBe(DOC('<node index="0" a="1"><node index="0" b="2" /></node>'));
    expect(cut.truncated).toBe(true);
    expect(cut.nodeCount).toBe(2);
    expect(captureUiXml(xml, 0, 100).xml).toBe(DOC('<node index="0" a="1" />'));
  });

  it('maxNodes: a node whose first child is cut becomes a leaf; one that kept children keeps its close tag', () => {
    const xml = DOC(
      '<node index="0" r="1"><node index="0" x="1"><node index="0" y="1" /></node><node index="1" z="1" /></node>' +
        '<node index="1" w="1"><node index="0" v="1" /></node>',
    );
    expect(captureUiXml(xml, 128, 2).xml).toBe(DOC('<node index="0" r="1"><node index="0" x="1" /></node>'));
    expect(captureUiXml(xml, 128, 3).xml).toBe(
      DOC('<node index="0" r="1"><node index="0" x="1"><node index="0" y="1" /></node></node>'),
    );
    expect(captureUiXml(xml, 128, 5).xml).toBe(
      DOC(
        '<node index="0" r="1"><node index="0" x="1"><node index="0" y="1" /></node><node index="1" z="1" /></node>' +
          '<node index="1" w="1" />',
      ),
    );
    expect(captureUiXml(xml, 128, 6).xml).toBe(xml);
  });

  it('a `>` inside a quoted attribute value does not end the tag', () => {
    const xml = DOC('<node index="0" text="a > b"><node index="0" text="c" /></node>');
    expect(captureUiXml(xml, 0, 10).xml).toBe(DOC('<node index="0" text="a > b" />'));
  });
});
