/**
 * The compact snapshot text over the 20 corpus dumps: every node the normalized tree keeps appears
 * on exactly one line (with includeHidden), under its own ref; interactive nodes come first; the
 * options scope it; labels are quoted so that a line cannot be split or forged by its text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactLine, isInteractive, renderCompactSnapshot, roleOf } from '../../src/mcp/compact-snapshot.ts';
import { normalizeSnapshot, type SnapshotNode } from '../../src/snapshot/normalize.ts';
import { readCorpus } from '../fixtures/instrumentation/large-dump.ts';

const corpus = readCorpus().map(({ name, xml }) => ({ name, xml, tree: normalizeSnapshot(xml) }));
/** Whether `ref` is `node` or inside it. */
function contains(node: SnapshotNode, ref: string): boolean {
  return node.ref === ref || node.children.some((c) => contains(c, ref));
}

const refsOfLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.split(' ')[0]);

describe('compact snapshot text', () => {
  it('has 20 corpus dumps', () => {
    expect(corpus).toHaveLength(20);
  });

  for (const { name, tree } of corpus) {
    it(`${name}: every kept node once, under the tree's ref, interactive first`, () => {
      const out = renderCompactSnapshot(tree.windows, { includeHidden: true });
      const lines = refsOfLines(out.text);
      expect([...lines].sort()).toEqual(tree.nodes.map((n) => n.ref).sort());
      expect(lines).toEqual(out.refs);
      const byRef = new Map(tree.nodes.map((n) => [n.ref, n]));
      const firstOther = lines.findIndex((r) => !isInteractive(byRef.get(r as string) as SnapshotNode));
      if (firstOther >= 0) {
        expect(
          lines.slice(firstOther).every((r) => !isInteractive(byRef.get(r as string) as SnapshotNode)),
        ).toBe(true);
      }
      for (const node of tree.nodes) {
        const line = out.text.split('\n').find((l) => l.startsWith(`${node.ref} `));
        expect(line).toBe(compactLine(node));
        if (node.text !== '')
          expect(line).toContain(JSON.stringify([...node.text].slice(0, 79).join('')).slice(0, -1));
      }
    });
  }

  it('leaves covered and off-screen nodes out by default and counts them', () => {
    for (const { tree } of corpus) {
      const out = renderCompactSnapshot(tree.windows);
      const hidden = tree.nodes.filter((n) => n.covered || !n.visible);
      expect(out.hidden).toBe(hidden.length);
      expect(out.refs).toHaveLength(tree.nodes.length - hidden.length);
    }
  });

  it('interactiveOnly keeps the interactive nodes; subtree keeps a node and its descendants', () => {
    const { tree } = corpus.find((c) => c.name.startsWith('20-')) as (typeof corpus)[number];
    const only = renderCompactSnapshot(tree.windows, { interactiveOnly: true, includeHidden: true });
    expect(only.refs).toEqual(tree.nodes.filter(isInteractive).map((n) => n.ref));
    const root = tree.windows[0] as SnapshotNode;
    const child = root.children[0] as SnapshotNode;
    const sub = renderCompactSnapshot(tree.windows, { subtree: child.ref, includeHidden: true });
    const inside: string[] = [];
    const walk = (n: SnapshotNode) => {
      inside.push(n.ref);
      n.children.forEach(walk);
    };
    walk(child);
    expect([...sub.refs].sort()).toEqual(inside.sort());
    expect(() => renderCompactSnapshot(tree.windows, { subtree: 'e99999' })).toThrow(RangeError);
  });

  it('calls editable fields edit and buttons button', () => {
    const roles = new Map<string, Set<string>>();
    for (const { tree } of corpus)
      for (const n of tree.nodes) roles.set(roleOf(n), (roles.get(roleOf(n)) ?? new Set()).add(n.type));
    expect([...(roles.get('edit') ?? [])].every((t) => /EditText|TextField|AutoComplete/.test(t))).toBe(true);
    expect(roles.get('edit')?.size).toBeGreaterThan(0);
    expect(roles.get('button')?.size).toBeGreaterThan(0);
  });

  it('names a button without a label of its own by the first text inside it', () => {
    let named = 0;
    for (const { tree } of corpus) {
      for (const node of tree.nodes) {
        if (!isInteractive(node) || node.text !== '' || node.contentDesc !== '') continue;
        const inside = tree.nodes
          .slice(tree.nodes.indexOf(node) + 1)
          .filter((n) => n.ref !== node.ref && contains(node, n.ref))
          .find((n) => n.text !== '' || n.contentDesc !== '');
        const line = compactLine(node);
        if (inside === undefined) expect(line).not.toContain(' >"');
        else {
          const first = inside.text !== '' ? inside.text : inside.contentDesc;
          expect(line).toContain(
            ` >${JSON.stringify([...first].length > 40 ? `${[...first].slice(0, 39).join('')}…` : first)}`,
          );
          named++;
        }
      }
    }
    expect(named).toBeGreaterThan(10);
  });

  it('a label of any text stays on its line, quoted (property)', () => {
    const base = corpus[4]?.tree.nodes[0] as SnapshotNode;
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 120 }),
        fc.string({ maxLength: 40 }),
        (text, hint) => {
          const line = compactLine({ ...base, text, hint, children: [] });
          expect(line).not.toContain('\n');
          expect(line.startsWith(`${base.ref} `)).toBe(true);
          if (text !== '') {
            const quoted = /^\S+ \S+ ("(?:[^"\\]|\\.)*")/.exec(line)?.[1] as string;
            const label = JSON.parse(quoted) as string;
            expect([...text].length > 80 ? text.startsWith(label.slice(0, -1)) : label === text).toBe(true);
          }
        },
      ),
    );
  });
});
