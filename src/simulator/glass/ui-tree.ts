/**
 * The accessibility tree the simulated a11y service serves, read from the device's uiautomator XML:
 * the active application window's root (`activeRootOrder`: the active application window by the
 * window metadata, else the first root that is neither system UI nor a keyboard, else the first
 * root) and its nodes, with class, text, content description, bounds as [x, y, w, h] and the boolean
 * fields (`editable` for EditText-like classes: uiautomator does not dump it; `compose` for the
 * nodes inside a ComposeView). Each node carries its
 * `source`: the document-order index of its `<node>` tag, which the device's screen model edits.
 * Pure string work over the document.
 */
import { isXml10Char } from '../../snapshot/xml-values.ts';
import { activeRootOrder } from '../helper/ui-capture.ts';
import type { A11yNode } from './a11y.ts';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Entities and character references decoded; a reference XML 1.0 cannot carry is dropped (as the bridge does). */
function unescapeXml(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e.startsWith('#')) {
      const code = e.startsWith('#x') ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return isXml10Char(code) ? String.fromCodePoint(code) : '';
    }
    return ENTITIES[e] ?? '';
  });
}

/** The attributes of one tag's text, unescaped. */
export function tagAttributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
    out.set(m[1] as string, unescapeXml(m[3] ?? m[4] ?? ''));
  }
  return out;
}

const BOUNDS = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/;

/** Classes whose nodes take text (EditText and its subclasses, Compose text fields). */
const EDITABLE_CLASS = /EditText|TextField|AutoCompleteTextView|SearchAutoComplete/;

export function isEditableClass(className: string): boolean {
  return EDITABLE_CLASS.test(className);
}

export interface NodeTag {
  /** Document-order index among the opening `<node>` tags. */
  index: number;
  /** Offsets of the tag in the document: `xml.slice(start, end)` is the whole tag. */
  start: number;
  end: number;
  /** Nesting depth (0 for a window root). */
  depth: number;
  attributes: Map<string, string>;
}

const NODE_TAG = /<(\/?)node\b((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>/g;

/** Every opening `<node>` tag of the document, in document order. */
export function* nodeTags(xml: string): Generator<NodeTag> {
  let index = 0;
  let depth = 0;
  for (const m of xml.matchAll(NODE_TAG)) {
    if (m[1] === '/') {
      depth = Math.max(0, depth - 1);
      continue;
    }
    const start = m.index;
    yield { index: index++, start, end: start + m[0].length, depth, attributes: tagAttributes(m[2] ?? '') };
    if (m[3] !== '/') depth += 1;
  }
}

interface Built {
  node: A11yNode & { children: A11yNode[] };
  packageName: string | null;
  attrs: Map<string, string>;
}

/** Hosts of Jetpack Compose content: every node inside one is a Compose node. */
const COMPOSE_HOST = /^androidx\.compose\.ui\.platform\.(ComposeView|AndroidComposeView)$/;

function build(attrs: Map<string, string>, source: number, inCompose: boolean): Built {
  const m = BOUNDS.exec(attrs.get('bounds') ?? '');
  const [x1, y1, x2, y2] = m ? m.slice(1).map(Number) : [0, 0, 0, 0];
  const className = attrs.get('class') ?? '';
  return {
    node: {
      className,
      text: attrs.get('text') || null,
      desc: attrs.get('content-desc') || null,
      bounds: [x1 as number, y1 as number, (x2 as number) - (x1 as number), (y2 as number) - (y1 as number)],
      editable: isEditableClass(className),
      clickable: attrs.get('clickable') === 'true',
      enabled: attrs.get('enabled') !== 'false',
      scrollable: attrs.get('scrollable') === 'true',
      children: [],
      source,
      ...(inCompose ? { compose: true } : {}),
    },
    packageName: attrs.get('package') || null,
    attrs,
  };
}

function windowRoots(xml: string): Built[] {
  const roots: Built[] = [];
  const stack: Built[] = [];
  for (const tag of nodeTags(xml)) {
    stack.length = tag.depth;
    const parent = stack.at(-1);
    const inCompose =
      parent !== undefined &&
      (parent.node.compose === true || COMPOSE_HOST.test(parent.node.className ?? ''));
    const built = build(tag.attributes, tag.index, inCompose);
    if (parent) parent.node.children.push(built.node);
    else roots.push(built);
    stack.push(built);
  }
  return roots;
}

/** Every window root of the document with its package. */
export function uiWindows(xml: string): Array<{ packageName: string | null; root: A11yNode }> {
  return windowRoots(xml).map((r) => ({ packageName: r.packageName, root: r.node }));
}

/** The window the a11y service answers from (`activeRootOrder`'s first root); null when there is none. */
export function activeA11yWindow(xml: string): { packageName: string | null; root: A11yNode } | null {
  const roots = windowRoots(xml);
  const first = activeRootOrder(roots.map((r) => r.attrs))[0];
  const root = first === undefined ? undefined : roots[first];
  return root === undefined ? null : { packageName: root.packageName, root: root.node };
}
