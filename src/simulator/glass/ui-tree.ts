/**
 * The accessibility tree the simulated a11y service serves, read from the device's uiautomator XML:
 * the active application window's root (the first root that is neither system UI nor a keyboard,
 * else the first root) and its nodes, with class, text, content description, bounds as
 * [x, y, w, h] and the boolean fields (`editable` for EditText-like classes: uiautomator does not
 * dump it). Pure string work over the document.
 */
import type { A11yNode } from './a11y.ts';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeXml(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(Number.parseInt(e.slice(1), 10));
    return ENTITIES[e] ?? '';
  });
}

function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
    out.set(m[1] as string, unescapeXml(m[3] ?? m[4] ?? ''));
  }
  return out;
}

const BOUNDS = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/;
const NON_APP_PACKAGE = /^com\.android\.systemui$|inputmethod|keyboard/i;

interface Built {
  node: A11yNode & { children: A11yNode[] };
  packageName: string | null;
}

function build(attrs: Map<string, string>): Built {
  const m = BOUNDS.exec(attrs.get('bounds') ?? '');
  const [x1, y1, x2, y2] = m ? m.slice(1).map(Number) : [0, 0, 0, 0];
  const className = attrs.get('class') ?? '';
  return {
    node: {
      className,
      text: attrs.get('text') || null,
      desc: attrs.get('content-desc') || null,
      bounds: [x1 as number, y1 as number, (x2 as number) - (x1 as number), (y2 as number) - (y1 as number)],
      editable: /EditText|TextField/.test(className),
      clickable: attrs.get('clickable') === 'true',
      enabled: attrs.get('enabled') !== 'false',
      scrollable: attrs.get('scrollable') === 'true',
      children: [],
    },
    packageName: attrs.get('package') || null,
  };
}

/** Every window root of the document with its package. */
export function uiWindows(xml: string): Array<{ packageName: string | null; root: A11yNode }> {
  const roots: Built[] = [];
  const stack: Built[] = [];
  for (const m of xml.matchAll(/<(\/?)node\b((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>/g)) {
    if (m[1] === '/') {
      stack.pop();
      continue;
    }
    const built = build(attributes(m[2] ?? ''));
    const parent = stack.at(-1);
    if (parent) parent.node.children.push(built.node);
    else roots.push(built);
    if (m[3] !== '/') stack.push(built);
  }
  return roots.map((r) => ({ packageName: r.packageName, root: r.node }));
}

/** The window the a11y service answers from: the first application root, else the first root. */
export function activeA11yWindow(xml: string): { packageName: string | null; root: A11yNode } | null {
  const windows = uiWindows(xml);
  return (
    windows.find((w) => w.packageName !== null && !NON_APP_PACKAGE.test(w.packageName)) ?? windows[0] ?? null
  );
}
