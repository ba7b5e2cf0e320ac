/**
 * The simulated a11y service's tree, read from uiautomator XML: every corpus dump yields one tree
 * per window root, each node counted exactly once (as many nodes as `<node` elements), bounds as
 * [x, y, w, h], and the active window is the first application root.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { A11yNode } from '../../src/simulator/glass/a11y.ts';
import { serializeA11yTree } from '../../src/simulator/glass/a11y.ts';
import { glassJson } from '../../src/simulator/glass/line-protocol.ts';
import { activeA11yWindow, uiWindows } from '../../src/simulator/glass/ui-tree.ts';

const DIR = new URL('../fixtures/uiautomator/', import.meta.url);
const dumps = readdirSync(DIR).filter((f) => f.endsWith('.xml'));

const count = (n: A11yNode): number => 1 + n.children.reduce((sum, c) => sum + count(c), 0);

describe('uiWindows on the corpus', () => {
  it('has all 20 dumps', () => expect(dumps).toHaveLength(20));

  it.each(dumps)('%s: every <node> once, bounds as x,y,w,h, a serializable tree', (file) => {
    const xml = readFileSync(new URL(file, DIR), 'utf8');
    const windows = uiWindows(xml);
    expect(windows.length).toBeGreaterThan(0);
    const nodes = (xml.match(/<node\b/g) ?? []).length;
    expect(windows.reduce((sum, w) => sum + count(w.root), 0)).toBe(nodes);
    const first = /<node\b[^>]*?bounds="\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]"/.exec(xml);
    if (first) {
      const [x1, y1, x2, y2] = first.slice(1).map(Number) as [number, number, number, number];
      expect(windows[0]!.root.bounds).toEqual([x1, y1, x2 - x1, y2 - y1]);
    }
    const active = activeA11yWindow(xml);
    expect(active).not.toBeNull();
    const { tree, byRef } = serializeA11yTree(active!.root);
    expect(byRef.length).toBe(count(active!.root)); // corpus trees are far shallower than MAX_TREE_DEPTH
    expect(JSON.parse(glassJson(tree)).ref).toBe(0);
  });

  it('unescapes attribute values and picks the application window over system UI', () => {
    const xml =
      '<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="com.android.systemui" bounds="[0,0][1080,80]" />' +
      '<node class="android.widget.FrameLayout" package="com.example" bounds="[0,80][1080,2400]" clickable="false">' +
      '<node class="android.widget.EditText" text="a &amp; b &lt;c&gt; &#128640;" content-desc="" package="com.example" bounds="[10,100][500,200]" clickable="true" enabled="true" />' +
      '</node></hierarchy>';
    const active = activeA11yWindow(xml);
    expect(active?.packageName).toBe('com.example');
    expect(active?.root.children[0]).toMatchObject({
      className: 'android.widget.EditText',
      text: 'a & b <c> 🚀',
      desc: null,
      bounds: [10, 100, 490, 100],
      editable: true,
      clickable: true,
      enabled: true,
    });
  });
});
