import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { normalizeSnapshot, type SnapshotNode } from '../../src/snapshot/normalize.ts';
import { buildLargeDump, readCorpus } from '../fixtures/instrumentation/large-dump.ts';

const corpus = readCorpus();
const byPrefix = (prefix: string) => {
  const entry = corpus.find((c) => c.name.startsWith(prefix));
  if (entry === undefined) throw new Error(`no corpus file ${prefix}`);
  return entry.xml;
};

/** Independent oracle: regex over start tags + a reference entity decoder. */
function decode(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[ref] as string;
  });
}
function oracleNodes(xml: string): Array<Record<string, string>> {
  return [...xml.matchAll(/<node\b((?:[^>"']|"[^"]*"|'[^']*')*)>/g)].map((m) => {
    const attrs: Record<string, string> = {};
    // Real dumps use both quote styles (08 and 19 have single-quoted values holding '"').
    for (const a of (m[1] as string).matchAll(/([\w:-]+)=(?:"([^"]*)"|'([^']*)')/g)) {
      attrs[a[1] as string] = decode((a[2] ?? a[3]) as string);
    }
    return attrs;
  });
}
function expectedBounds(text: string | undefined) {
  const m = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/.exec(text ?? '');
  if (m === null) return null;
  const [l, t, r, b] = m.slice(1).map(Number) as [number, number, number, number];
  return { x: l, y: t, width: Math.max(0, r - l), height: Math.max(0, b - t) };
}
function walk(nodes: SnapshotNode[], out: SnapshotNode[] = []): SnapshotNode[] {
  for (const n of nodes) {
    out.push(n);
    walk(n.children, out);
  }
  return out;
}

describe('normalizeSnapshot on the 20 corpus dumps', () => {
  it.each(corpus.map((c) => [c.name, c.xml]))(
    '%s: every node, in order, with decoded attributes',
    (_, xml) => {
      const snapshot = normalizeSnapshot(xml);
      const expected = oracleNodes(xml);
      expect(snapshot.nodeCount).toBe(expected.length);
      expect(snapshot.nodeCount).toBe((xml.match(/<node[\s/>]/g) ?? []).length);
      const tree = walk(snapshot.windows);
      expect(tree).toEqual(snapshot.nodes);
      tree.forEach((node, i) => {
        const attrs = expected[i] as Record<string, string>;
        expect(node.ref).toBe(`e${i + 1}`);
        expect(node.text).toBe(attrs['text'] ?? '');
        expect(node.contentDesc).toBe(attrs['content-desc'] ?? '');
        expect(node.resourceId).toBe(attrs['resource-id'] ?? '');
        expect(node.className).toBe(attrs['class'] ?? '');
        expect(node.type).toBe((attrs['class'] ?? '').split('.').pop());
        expect(node.package).toBe(attrs['package'] ?? '');
        expect(node.bounds).toEqual(expectedBounds(attrs['bounds']));
        expect(node.clickable).toBe(attrs['clickable'] === 'true');
        expect(node.enabled).toBe(attrs['enabled'] === 'true');
        expect(node.checked).toBe(attrs['checked'] === 'true');
        expect(node.visible).toBe(attrs['visible-to-user'] !== 'false');
        expect(node.scrollable).toBe(attrs['scrollable'] === 'true');
        expect(node.canScrollForward === null).toBe(!node.scrollable);
        expect(node).not.toHaveProperty('drawingOrder');
        expect(JSON.stringify(node)).not.toContain('drawing');
      });
      expect(snapshot.raw).toBe(xml);
      expect(Object.keys(snapshot)).toEqual(['rotation', 'windowCount', 'nodeCount', 'windows']);
      expect(snapshot.rotation).toBe(Number(/<hierarchy rotation="(\d)"/.exec(xml)?.[1]));
    },
  );

  it('multi-window dumps: three window roots with metadata', () => {
    const avito = normalizeSnapshot(byPrefix('20-'));
    expect(avito.windowCount).toBe(3);
    expect(avito.windows.map((w) => w.window?.package)).toEqual([
      'com.avito.android',
      'com.android.systemui',
      'com.google.android.inputmethod.latin',
    ]);
    expect(avito.windows.map((w) => w.window?.index)).toEqual([0, 1, 2]);
    expect(avito.windows[0]?.children[0]?.window).toBeNull();
    expect(normalizeSnapshot(byPrefix('13-')).windowCount).toBe(3);
    const clash = normalizeSnapshot(byPrefix('01-'));
    expect(clash.windows[0]?.window).toEqual({
      index: 0,
      rotation: 0,
      package: 'com.supercell.clashofclans',
      displayId: 0,
    });
  });

  it('rotations, RTL, CJK, emoji (numeric references incl. astral) and &amp;', () => {
    expect(normalizeSnapshot(byPrefix('06-')).windows[0]?.window?.rotation).toBe(3);
    expect(normalizeSnapshot(byPrefix('02-')).rotation).toBe(1);
    const rtl = normalizeSnapshot(byPrefix('14-')).nodes.map((n) => n.text);
    expect(rtl).toContain('اختر نموذجًا متوافقًا مع ذاكرة جهازك');
    const emoji = normalizeSnapshot(byPrefix('15-')).nodes.map((n) => n.text);
    expect(emoji).toContain('🎭 Moods & Activities');
    expect(emoji).toContain('🧊');
    expect(normalizeSnapshot(byPrefix('12-')).nodes.map((n) => n.text)).toContain('Video & Codec');
    const lock = normalizeSnapshot(byPrefix('09-')).nodes.map((n) => n.text);
    expect(lock.some((t) => t.includes('\n'))).toBe(true);
  });

  it('vendor attributes (xpos) and non-zero-origin bounds', () => {
    const huawei = normalizeSnapshot(byPrefix('17-'));
    expect(huawei.nodes[0]?.bounds).toEqual({ x: 800, y: 624, width: 720, height: 1440 });
  });

  it('occlusion where corpus siblings overlap with higher drawing-order', () => {
    const avito = normalizeSnapshot(byPrefix('20-'));
    const sheet = avito.nodes.find((n) => n.resourceId === 'com.avito.android:id/bxcontent_bottom_sheet');
    expect(sheet).toMatchObject({ covered: true, hittable: false });
    // Descendants under the search overlay are covered too; the overlay itself is not.
    expect(avito.nodes.find((n) => n.resourceId === 'com.avito.android:id/recycler_view')?.covered).toBe(
      true,
    );
    expect(
      avito.nodes.find((n) => n.resourceId === 'com.avito.android:id/search_view_container')?.covered,
    ).toBe(false);
    const launcher = normalizeSnapshot(byPrefix('13-'));
    // A transparent full-screen container holding only a small search bar does not cover the workspace.
    expect(launcher.nodes.find((n) => n.resourceId === 'com.microvirt.launcher2:id/workspace')?.covered).toBe(
      false,
    );
    // The hint layer (drawing-order 7, clickable) covers the edit text under it (drawing-order 1).
    expect(launcher.nodes.find((n) => n.resourceId === 'com.microvirt.launcher2:id/show_text')).toMatchObject(
      {
        covered: true,
        hittable: false,
      },
    );
  });
});

describe('normalizeSnapshot on crafted dumps', () => {
  const node = (attrs: string, children = '') =>
    children === '' ? `<node ${attrs} />` : `<node ${attrs}>${children}</node>`;

  it('occlusion: ≥ 90 % covered by a later, higher drawing-order sibling with content', () => {
    const xml = `<hierarchy rotation="0">${node(
      'class="android.widget.FrameLayout" bounds="[0,0][100,100]"',
      node('text="under" clickable="true" bounds="[0,0][100,100]" drawing-order="1"') +
        node('text="over" bounds="[0,0][100,90]" drawing-order="2"') +
        node('text="front" bounds="[0,200][100,300]" drawing-order="5"') +
        node('text="later but behind" bounds="[0,200][100,300]" drawing-order="3"') +
        node('text="half" bounds="[0,400][100,500]" drawing-order="1"') +
        node(
          'bounds="[0,400][100,500]" drawing-order="9"',
          node('text="small" bounds="[0,400][100,450]" drawing-order="1"'),
        ),
    )}</hierarchy>`;
    const s = normalizeSnapshot(xml);
    const byText = (t: string) => s.nodes.find((n) => n.text === t);
    expect(byText('under')).toMatchObject({ covered: true, hittable: false }); // exactly 90 %
    expect(byText('over')).toMatchObject({ covered: false, hittable: true });
    expect(byText('front')).toMatchObject({ covered: false, hittable: true }); // later sibling, lower order
    expect(byText('later but behind')).toMatchObject({ covered: false, hittable: true });
    // Only half of "half" is under the visible content ("small") of the drawing-order 9 sibling.
    expect(byText('half')).toMatchObject({ covered: false, hittable: true });
    expect(
      normalizeSnapshot(xml, { coverageThreshold: 0.5 }).nodes.find((n) => n.text === 'half')?.covered,
    ).toBe(true);
  });

  it('occlusion needs visible content and a higher drawing-order; descendants inside are covered', () => {
    const xml = `<hierarchy rotation="0">${node(
      'bounds="[0,0][100,100]"',
      node(
        'text="a" bounds="[0,0][100,100]" drawing-order="1"',
        node('text="inner" bounds="[10,10][20,20]"'),
      ) +
        node('text="invisible" visible-to-user="false" bounds="[0,0][100,100]" drawing-order="5"') +
        node('bounds="[0,0][100,100]" drawing-order="6"') +
        node('text="b" bounds="[0,0][100,100]" drawing-order="1"') +
        node('text="top" bounds="[0,0][100,92]" drawing-order="3"'),
    )}</hierarchy>`;
    const s = normalizeSnapshot(xml);
    const byText = (t: string) => s.nodes.find((n) => n.text === t);
    expect(byText('a')).toMatchObject({ covered: true, hittable: false });
    expect(byText('inner')).toMatchObject({ covered: true, hittable: false });
    expect(byText('b')).toMatchObject({ covered: true });
    expect(byText('top')).toMatchObject({ covered: false, hittable: true });
    expect(byText('invisible')).toMatchObject({ covered: false, hittable: false, visible: false });
  });

  it('occlusion among hundreds of siblings, some inside an unknown element (the scratch regrows)', () => {
    // The occlusion scratch is kept per child-stack slot: > 256 siblings with children of their own
    // (slots reused after each closes) and a cover beyond them, inside an unknown element.
    const filler = (i: number) =>
      node(
        `text="f${i}" bounds="[0,${1000 + i * 20}][10,${1010 + i * 20}]" drawing-order="1"`,
        node(`text="c${i}" bounds="[0,${1000 + i * 20}][5,${1005 + i * 20}]"`),
      );
    let fillers = '';
    for (let i = 0; i < 400; i++) fillers += filler(i);
    let grouped = '';
    for (let i = 400; i < 700; i++) grouped += filler(i);
    const cover = (x: number) =>
      node(
        `bounds="[${x},0][${x + 100},100]" drawing-order="2"`,
        node(`text="cover${x}" bounds="[${x},0][${x + 100},95]"`),
      );
    const target = (name: string, x: number) =>
      node(
        `text="${name}" bounds="[${x},0][${x + 100},100]" drawing-order="1"`,
        node(`text="${name}-inside" bounds="[${x + 10},10][${x + 20},20]"`) +
          node(`text="${name}-outside" bounds="[${x},96][${x + 100},100]"`),
      );
    // "early" is covered by a sibling whose box was kept before the scratch regrew; "late" by one
    // inside the unknown element, beyond the regrowth.
    const xml = `<hierarchy rotation="0">${node(
      'bounds="[0,0][300,20000]"',
      target('early', 0) +
        target('late', 200) +
        cover(0) +
        fillers +
        `<group>${grouped}${cover(200)}</group>`,
    )}</hierarchy>`;
    const s = normalizeSnapshot(xml);
    expect(s.nodeCount).toBe(1 + 6 + 700 * 2 + 4);
    expect(s.nodes.filter((n) => n.covered).map((n) => n.text)).toEqual([
      'early',
      'early-inside',
      'late',
      'late-inside',
    ]);
    expect(s.nodes.find((n) => n.text === 'late')).toMatchObject({ covered: true, hittable: false });
    // With a higher threshold the 95 % covers are not enough.
    expect(normalizeSnapshot(xml, { coverageThreshold: 0.96 }).nodes.some((n) => n.covered)).toBe(false);
  });

  it('scroll hints from attributes and from child bounds', () => {
    const xml = `<hierarchy rotation="0">${node(
      'bounds="[0,0][100,200]"',
      node(
        'scrollable="true" bounds="[0,0][100,100]"',
        node('bounds="[0,-20][100,40]"') + node('bounds="[0,40][100,130]"'),
      ) +
        node(
          'scrollable="true" can-scroll-forward="false" can-scroll-backward="true" bounds="[0,100][100,200]"',
        ) +
        node('scrollable="true" bounds="[0,100][100,200]"', node('bounds="[0,100][100,150]"')),
    )}</hierarchy>`;
    const [, a, b, c] = normalizeSnapshot(xml).nodes.filter((n) => n.ref === 'e1' || n.scrollable);
    expect(a).toMatchObject({ canScrollForward: true, canScrollBackward: true });
    expect(b).toMatchObject({ canScrollForward: false, canScrollBackward: true });
    expect(c).toMatchObject({ canScrollForward: false, canScrollBackward: false });
  });

  it('window metadata written by the snapshot helper', () => {
    const xml = `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" window-index="0" window-type="1" window-layer="21000" window-active="true" window-focused="false" window-bounds="[0,0][1080,2400]" class="android.widget.FrameLayout" package="com.example" visible-to-user="true" drawing-order="0" enabled="true" selected="false" password="false" bounds="[0,0][1080,2400]" /><node index="1" window-index="1" window-type="2" window-layer="22000" window-active="false" window-focused="false" window-bounds="[0,1500][1080,2400]" class="android.widget.FrameLayout" package="com.google.android.inputmethod.latin" bounds="[0,1500][1080,2400]" /></hierarchy>`;
    const s = normalizeSnapshot(xml);
    expect(s.windows.map((w) => w.window)).toEqual([
      {
        index: 0,
        rotation: 0,
        package: 'com.example',
        type: 1,
        layer: 21000,
        active: true,
        focused: false,
        bounds: { x: 0, y: 0, width: 1080, height: 2400 },
      },
      {
        index: 1,
        rotation: 0,
        package: 'com.google.android.inputmethod.latin',
        type: 2,
        layer: 22000,
        active: false,
        focused: false,
        bounds: { x: 0, y: 1500, width: 1080, height: 900 },
      },
    ]);
  });

  it('negative and zero-size bounds, single quotes, comments, hex references, trailing dump message', () => {
    const xml = `\uFEFF<?xml version="1.0"?>\r\n<!-- c --><hierarchy rotation='2'>\r\n  <node text='a&#x1F600;b&lt;' bounds="[-10,-5][20,15]"/>\r\n  <node bounds="[5,5][5,9]" visible-to-user="true"/>\r\n</hierarchy>\nUI hierchary dumped to: /dev/tty`;
    const s = normalizeSnapshot(xml);
    expect(s.rotation).toBe(2);
    expect(s.nodes[0]).toMatchObject({
      text: 'a😀b<',
      bounds: { x: -10, y: -5, width: 30, height: 20 },
      hittable: true,
    });
    expect(s.nodes[1]).toMatchObject({ bounds: { x: 5, y: 5, width: 0, height: 4 }, hittable: false });
  });

  it('a 5,000-node dump built from corpus nodes', () => {
    const xml = buildLargeDump(5000);
    const s = normalizeSnapshot(xml);
    expect(s.nodeCount).toBe(5000);
    expect(s.nodes[4999]?.ref).toBe('e5000');
    expect(new Set(s.nodes.map((n) => n.ref)).size).toBe(5000);
  });
});

describe('invalid XML', () => {
  const invalid = [
    ['', 'no <hierarchy> element'],
    ['<hierarchy>', 'unexpected end of input'],
    ['<hierarchy><node></hierarchy>', 'does not match'],
    ['<hierarchy><node a="1></node></hierarchy>', 'unterminated attribute value'],
    ['<hierarchy><node a="1<2" /></hierarchy>', "'<' in an attribute value"],
    ['<hierarchy><node a="1"></node', 'expected'],
    ['<hierarchy><node a=1 /></hierarchy>', 'quoted attribute value'],
    ['<hierarchy><node text="&bogus;" /></hierarchy>', 'unknown reference'],
    ['<hierarchy><node text="&#99999999;" /></hierarchy>', 'unknown reference'],
    ['<root/>', 'not <hierarchy>'],
    ['junk<hierarchy/>', 'text before the root element'],
    ['<hierarchy/><hierarchy/>', ''],
    ['<hierarchy><node a="1"b="2"/></hierarchy>', 'whitespace'],
  ] as const;

  it.each(invalid)('%j → HELPER_PROTOCOL_ERROR naming the position', (xml, reason) => {
    let caught: unknown;
    try {
      normalizeSnapshot(xml);
    } catch (err) {
      caught = err;
    }
    if (xml === '<hierarchy/><hierarchy/>') {
      // Content after </hierarchy> is ignored (uiautomator dump to /dev/tty appends a message).
      expect(caught).toBeUndefined();
      return;
    }
    expect(caught).toBeInstanceOf(BridgeError);
    const error = caught as BridgeError;
    expect(error.code).toBe('HELPER_PROTOCOL_ERROR');
    expect(error.message).toContain(reason);
    expect(error.message).toMatch(/line \d+ column \d+/);
    expect(error.details).toHaveProperty('offset');
  });

  it('property: arbitrary strings and mutated corpus XML throw nothing but the typed error', () => {
    const sources = corpus.slice(0, 8).map((c) => c.xml);
    const mutated = fc
      .tuple(
        fc.constantFrom(...sources),
        fc.nat(),
        fc.nat({ max: 30 }),
        fc.string({
          maxLength: 6,
          unit: fc.constantFrom('<', '>', '"', "'", '&', '/', '=', ' ', 'a', '#', ';', '[', ']', '-', '1'),
        }),
      )
      .map(([xml, at, del, ins]) => {
        const p = at % (xml.length + 1);
        return xml.slice(0, p) + ins + xml.slice(p + del);
      });
    fc.assert(
      fc.property(fc.oneof(fc.string(), mutated), (xml) => {
        try {
          const s = normalizeSnapshot(xml);
          expect(s.nodes.length).toBe(s.nodeCount);
        } catch (err) {
          expect(err).toBeInstanceOf(BridgeError);
          expect((err as BridgeError).code).toBe('HELPER_PROTOCOL_ERROR');
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('property: generated well-formed trees normalize with one node per element', () => {
    const text = fc.string({ maxLength: 12 });
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
    type Tree = { text: string; children: Tree[] };
    const treeOf = (depth: number): fc.Arbitrary<Tree> =>
      depth === 0
        ? fc.record({ text, children: fc.constant([] as Tree[]) })
        : fc.record({ text, children: fc.array(treeOf(depth - 1), { maxLength: 3 }) });
    const tree = treeOf(3);
    const render = (t: Tree): string =>
      t.children.length === 0
        ? `<node text="${esc(t.text)}" bounds="[0,0][1,1]"/>`
        : `<node text="${esc(t.text)}">${t.children.map(render).join('')}</node>`;
    const flat = (t: Tree): string[] => [t.text, ...t.children.flatMap(flat)];
    fc.assert(
      fc.property(fc.array(tree, { maxLength: 3 }), (roots) => {
        const s = normalizeSnapshot(`<hierarchy rotation="0">${roots.map(render).join('\n')}</hierarchy>`);
        expect(s.nodes.map((n) => n.text)).toEqual(roots.flatMap(flat));
        expect(s.windowCount).toBe(roots.length);
      }),
      { numRuns: 200 },
    );
  });
});
