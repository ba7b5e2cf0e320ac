/**
 * The a11y tree normalizer (src/helpers/glass/a11y-tree.ts): over every uiautomator dump of the
 * corpus (each window served as the simulated service serves it), properties over generated trees
 * (refs e1… in pre-order ↔ raw refs, fields carried over, never anything but a typed error on any
 * JSON), the ref parser, and the CLI's text form.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatA11yTree } from '../../src/cli/glass.ts';
import { isBridgeError } from '../../src/errors.ts';
import {
  type A11yTreeNode,
  MAX_A11Y_DEPTH,
  normalizeA11yTree,
  parseA11yRef,
  tapPoint,
} from '../../src/helpers/glass/a11y-tree.ts';
import { type A11yNode, serializeA11yTree } from '../../src/simulator/glass/a11y.ts';
import { uiWindows } from '../../src/simulator/glass/ui-tree.ts';

const DIR = new URL('../fixtures/uiautomator/', import.meta.url);
const DUMPS = readdirSync(DIR).filter((f) => f.endsWith('.xml'));

function preorder(root: A11yTreeNode): A11yTreeNode[] {
  const out: A11yTreeNode[] = [];
  const visit = (n: A11yTreeNode) => {
    out.push(n);
    for (const c of n.children) visit(c);
  };
  visit(root);
  return out;
}

/** The service's tree as it crosses the wire (JSON text and back). */
const wire = (root: A11yNode) => JSON.parse(JSON.stringify(serializeA11yTree(root).tree)) as unknown;

function expectFaithful(root: A11yNode): void {
  const { byRef } = serializeA11yTree(root);
  const normalized = normalizeA11yTree(wire(root));
  expect(normalized.nodeCount).toBe(byRef.length);
  const nodes = preorder(normalized.root);
  expect(nodes).toHaveLength(byRef.length);
  nodes.forEach((n, i) => {
    const source = byRef[i]!;
    expect(n.ref).toBe(`e${i + 1}`);
    expect(n.rawRef).toBe(i);
    expect(n.className).toBe(source.className ?? '');
    expect(n.type).toBe((source.className ?? '').split('.').at(-1));
    expect(n.text).toBe(source.text ?? '');
    expect(n.contentDesc).toBe(source.desc ?? '');
    const [x, y, width, height] = source.bounds;
    expect(n.bounds).toEqual({ x, y, width, height });
    expect([n.enabled, n.clickable, n.scrollable, n.editable]).toEqual([
      source.enabled,
      source.clickable,
      source.scrollable,
      source.editable,
    ]);
    expect(n.children).toHaveLength(source.children.length);
  });
}

describe('normalizeA11yTree over the uiautomator corpus', () => {
  it('has dumps to read', () => {
    expect(DUMPS.length).toBeGreaterThanOrEqual(20);
  });

  for (const file of DUMPS) {
    it(`every window of ${file}: refs e1… in pre-order, the service's fields carried over`, () => {
      const windows = uiWindows(readFileSync(new URL(file, DIR), 'utf8'));
      expect(windows.length).toBeGreaterThan(0);
      for (const w of windows) expectFaithful(w.root);
    });
  }
});

const nodeArb: fc.Memo<A11yNode> = fc.memo((depth) =>
  fc.record({
    className: fc.option(fc.string({ maxLength: 30 }), { nil: null }),
    text: fc.option(fc.string({ maxLength: 20, unit: 'grapheme' }), { nil: null }),
    desc: fc.option(fc.string({ maxLength: 10 }), { nil: null }),
    bounds: fc.tuple(
      fc.integer({ min: -5000, max: 5000 }),
      fc.integer({ min: -5000, max: 5000 }),
      fc.integer({ min: 0, max: 5000 }),
      fc.integer({ min: 0, max: 5000 }),
    ),
    editable: fc.boolean(),
    clickable: fc.boolean(),
    enabled: fc.boolean(),
    scrollable: fc.boolean(),
    children: depth > 1 ? fc.array(nodeArb(depth - 1), { maxLength: 4 }) : fc.constant([]),
  }),
);

describe('normalizeA11yTree properties', () => {
  it('a served tree normalizes faithfully, refs e1… in pre-order', () => {
    fc.assert(
      fc.property(nodeArb(5), (root) => {
        expectFaithful(root);
      }),
      { numRuns: 200 },
    );
  });

  it('any JSON value gives a tree or a HELPER_PROTOCOL_ERROR naming a path, never another failure', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        try {
          normalizeA11yTree(value);
        } catch (err) {
          expect(isBridgeError(err) && err.code === 'HELPER_PROTOCOL_ERROR').toBe(true);
          expect((err as Error).message).toMatch(/malformed tree: tree/);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a tampered ref, field or shape is refused naming where', () => {
    const served = wire({
      className: 'a.B',
      text: null,
      desc: null,
      bounds: [0, 0, 10, 10],
      editable: false,
      clickable: true,
      enabled: true,
      scrollable: false,
      children: [
        {
          className: 'a.C',
          text: 'x',
          desc: null,
          bounds: [1, 1, 2, 2],
          editable: true,
          clickable: false,
          enabled: true,
          scrollable: false,
          children: [],
        },
      ],
    }) as { children: Array<Record<string, unknown>> } & Record<string, unknown>;
    const refused = (mutate: (t: typeof served) => void, message: string) => {
      const copy = structuredClone(served);
      mutate(copy);
      expect(() => normalizeA11yTree(copy)).toThrow(message);
    };
    refused((t) => {
      t.children[0]!['ref'] = 5;
    }, 'tree.children.0.ref must be 1');
    refused((t) => {
      t.children[0]!['text'] = 7;
    }, 'tree.children.0.text must be a string');
    refused((t) => {
      t['bounds'] = { x: 0, y: 0, w: 1 };
    }, 'tree.bounds.h must be a number');
    refused((t) => {
      t['clickable'] = 'yes';
    }, 'tree.clickable must be a boolean');
    refused((t) => {
      (t as Record<string, unknown>)['children'] = {};
    }, 'tree.children must be an array');
    refused((t) => {
      delete t['class'];
    }, 'tree.class must be a string');
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let i = 0; i <= MAX_A11Y_DEPTH + 1; i++) {
      const child: Record<string, unknown> = {};
      Object.assign(deep, { ref: i, class: 'X', bounds: { x: 0, y: 0, w: 0, h: 0 }, children: [child] });
      deep = child;
    }
    expect(() => normalizeA11yTree(top)).toThrow(`nested deeper than ${MAX_A11Y_DEPTH} levels`);
  });
});

describe('parseA11yRef', () => {
  it('takes eN and the raw integer (as a number or digits) and maps eN to N-1', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_998 }), (n) => {
        expect(parseA11yRef(`e${n + 1}`)).toBe(n);
        expect(parseA11yRef(n)).toBe(n);
        expect(parseA11yRef(String(n))).toBe(n);
      }),
    );
  });

  it('refuses anything else with INVALID_ARGUMENT naming the value', () => {
    for (const bad of ['e0', 'e', 'E4', 'e-1', '01', ' e1', 'e1 ', -1, 1.5, 'x', '', null, {}, 1e12]) {
      expect(() => parseA11yRef(bad), JSON.stringify(bad)).toThrow(/is not a node ref/);
    }
    fc.assert(
      fc.property(fc.string(), (s) => {
        try {
          const n = parseA11yRef(s);
          expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
        } catch (err) {
          expect(isBridgeError(err) && err.code === 'INVALID_ARGUMENT').toBe(true);
        }
      }),
    );
  });
});

describe('the CLI text form of a tree', () => {
  it('one node a line: ref, type, text, bounds, flags, indented by depth', () => {
    const tree = normalizeA11yTree(
      wire({
        className: 'android.widget.FrameLayout',
        text: null,
        desc: null,
        bounds: [0, 0, 1080, 2400],
        editable: false,
        clickable: false,
        enabled: true,
        scrollable: false,
        children: [
          {
            className: 'android.widget.EditText',
            text: 'héllo 👋',
            desc: 'Note',
            bounds: [10, 20, 300, 40],
            editable: true,
            clickable: true,
            enabled: false,
            scrollable: false,
            children: [],
          },
        ],
      }),
    );
    expect(formatA11yTree(tree.root)).toBe(
      'e1 FrameLayout [0,0 1080x2400]\n  e2 EditText "héllo 👋" desc="Note" [10,20 300x40] editable,clickable,disabled',
    );
  });
});

describe('tapPoint: where a click by coordinates lands', () => {
  const window = { x: 0, y: 0, width: 1080, height: 2400 };
  it('is the centre of the node, of its part on screen when it reaches past the window', () => {
    expect(tapPoint({ x: 100, y: 400, width: 400, height: 120 }, window)).toEqual({ x: 300, y: 460 });
    expect(tapPoint({ x: 900, y: 2300, width: 400, height: 300 }, window)).toEqual({ x: 990, y: 2350 });
    expect(tapPoint({ x: -50, y: -50, width: 100, height: 100 }, window)).toEqual({ x: 25, y: 25 });
  });

  it('is null for empty bounds and for nodes wholly off screen', () => {
    expect(tapPoint({ x: 0, y: 0, width: 0, height: 0 }, window)).toBeNull();
    expect(tapPoint({ x: 10, y: 10, width: 50, height: -5 }, window)).toBeNull();
    expect(tapPoint({ x: 1080, y: 0, width: 10, height: 10 }, window)).toBeNull();
    expect(tapPoint({ x: 0, y: -20, width: 10, height: 20 }, window)).toBeNull();
  });

  it('always lands inside both the node and the window (property)', () => {
    const rect = fc.record({
      x: fc.integer({ min: -5000, max: 5000 }),
      y: fc.integer({ min: -5000, max: 5000 }),
      width: fc.integer({ min: -100, max: 5000 }),
      height: fc.integer({ min: -100, max: 5000 }),
    });
    fc.assert(
      fc.property(rect, rect, (node, win) => {
        const p = tapPoint(node, win);
        if (p === null) return;
        for (const r of [node, win]) {
          expect(p.x).toBeGreaterThanOrEqual(r.x);
          expect(p.x).toBeLessThan(r.x + r.width);
          expect(p.y).toBeGreaterThanOrEqual(r.y);
          expect(p.y).toBeLessThan(r.y + r.height);
        }
        expect(p.x).toBeGreaterThanOrEqual(0);
        expect(p.y).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});
