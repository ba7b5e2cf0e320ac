/**
 * The glass a11y service's tree (the glass contract) as the bridge serves it. The raw tree is outside input:
 * every node is checked (a JSON object; `ref` the node's pre-order index from 0 at the root, so a
 * ref the bridge hands out addresses the node the service will act on; `class` a string; `text` and
 * `desc` strings when present; `bounds` four finite numbers; the flags booleans when present) and a
 * tree that breaks a rule is a HELPER_PROTOCOL_ERROR naming the node's path and the rule.
 *
 * The normalized tree uses the snapshot's ref scheme: nodes in pre-order get `e1`, `e2`, … (raw
 * ref n ↔ `e{n+1}`), with the snapshot node's fields that an accessibility node has (`type` the
 * short class name, `className`, `text`, `contentDesc`, `bounds` {x, y, width, height}, the flags)
 * plus `editable` and the raw ref. Pure.
 */
import { BridgeError } from '../../errors.ts';
import { formatNodeRef, parseNodeRef } from '../../snapshot/node-ref.ts';
import { shortType } from '../../snapshot/tree-builder.ts';

/** Deepest nesting accepted (the service stops serializing at 256 levels). */
export const MAX_A11Y_DEPTH = 256;
/** Most nodes accepted in one tree. */
export const MAX_A11Y_NODES = 100_000;

export interface A11yBounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface A11yTreeNode {
  /** `e1`, `e2`, … in pre-order (the snapshot's scheme). */
  ref: string;
  /** The service's own ref: the pre-order index from 0 (`ref` is `e{rawRef + 1}`). */
  rawRef: number;
  type: string;
  className: string;
  text: string;
  contentDesc: string;
  bounds: A11yBounds;
  enabled: boolean;
  clickable: boolean;
  scrollable: boolean;
  editable: boolean;
  children: A11yTreeNode[];
}

export interface NormalizedA11yTree {
  nodeCount: number;
  root: A11yTreeNode;
}

function broken(path: string, rule: string): BridgeError {
  return new BridgeError('HELPER_PROTOCOL_ERROR', `glass-a11y sent a malformed tree: ${path} ${rule}`, {
    retryable: false,
    details: { component: 'glass-a11y', path },
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalText(node: Record<string, unknown>, key: string, path: string): string {
  if (!Object.hasOwn(node, key) || node[key] === undefined) return '';
  const v = node[key];
  if (typeof v !== 'string') throw broken(`${path}.${key}`, 'must be a string');
  return v;
}

function flag(node: Record<string, unknown>, key: string, path: string): boolean {
  if (!Object.hasOwn(node, key)) return false;
  const v = node[key];
  if (typeof v !== 'boolean') throw broken(`${path}.${key}`, 'must be a boolean');
  return v;
}

function boundsOf(node: Record<string, unknown>, path: string): A11yBounds {
  const b = Object.hasOwn(node, 'bounds') ? node['bounds'] : undefined;
  if (!isObject(b)) throw broken(`${path}.bounds`, 'must be an object {x, y, w, h}');
  const out: number[] = [];
  for (const key of ['x', 'y', 'w', 'h']) {
    const v = Object.hasOwn(b, key) ? b[key] : undefined;
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw broken(`${path}.bounds.${key}`, 'must be a number');
    out.push(v);
  }
  const [x, y, width, height] = out as [number, number, number, number];
  return { x, y, width, height };
}

/** Check and normalize a raw tree (the `tree` of a `tree` reply). */
export function normalizeA11yTree(raw: unknown): NormalizedA11yTree {
  let count = 0;
  const visit = (value: unknown, path: string, depth: number): A11yTreeNode => {
    if (depth > MAX_A11Y_DEPTH) throw broken(path, `is nested deeper than ${MAX_A11Y_DEPTH} levels`);
    if (!isObject(value)) throw broken(path, 'must be a node object');
    if (count >= MAX_A11Y_NODES) throw broken(path, `is past the limit of ${MAX_A11Y_NODES} nodes`);
    const rawRef = count++;
    const ref = Object.hasOwn(value, 'ref') ? value['ref'] : undefined;
    if (ref !== rawRef) throw broken(`${path}.ref`, `must be ${rawRef} (the pre-order index of the node)`);
    const className = Object.hasOwn(value, 'class') ? value['class'] : undefined;
    if (typeof className !== 'string') throw broken(`${path}.class`, 'must be a string');
    const node: A11yTreeNode = {
      ref: formatNodeRef(rawRef),
      rawRef,
      type: shortType(className),
      className,
      text: optionalText(value, 'text', path),
      contentDesc: optionalText(value, 'desc', path),
      bounds: boundsOf(value, path),
      enabled: flag(value, 'enabled', path),
      clickable: flag(value, 'clickable', path),
      scrollable: flag(value, 'scrollable', path),
      editable: flag(value, 'editable', path),
      children: [],
    };
    const children = Object.hasOwn(value, 'children') ? value['children'] : undefined;
    if (children !== undefined) {
      if (!Array.isArray(children)) throw broken(`${path}.children`, 'must be an array');
      children.forEach((child, i) => {
        node.children.push(visit(child, `${path}.children.${i}`, depth + 1));
      });
    }
    return node;
  };
  const root = visit(raw, 'tree', 0);
  return { nodeCount: count, root };
}

/**
 * The service's ref for a ref the caller gives: `e4` (the normalized scheme) or the raw integer 3.
 * INVALID_ARGUMENT naming the value otherwise.
 */
export function parseA11yRef(ref: unknown): number {
  if (typeof ref === 'number' && Number.isSafeInteger(ref) && ref >= 0 && ref < 1_000_000_000) return ref;
  if (typeof ref === 'string') {
    const index = parseNodeRef(ref);
    if (index !== undefined) return index;
    if (/^(0|[1-9][0-9]{0,8})$/.test(ref)) return Number(ref);
  }
  throw new BridgeError(
    'INVALID_ARGUMENT',
    `ref ${JSON.stringify(ref)?.slice(0, 40) ?? String(ref)} is not a node ref: use e1, e2, … from the normalized tree or the raw integer from the raw tree`,
    { details: { errors: [{ path: 'ref', message: 'must be eN (N ≥ 1) or an integer ≥ 0' }] } },
  );
}

/** Every node's bounds, by raw ref (pre-order): what a tap on a served node needs. */
export function boundsByRef(tree: NormalizedA11yTree): A11yBounds[] {
  const out: A11yBounds[] = [];
  const visit = (n: A11yTreeNode): void => {
    out[n.rawRef] = n.bounds;
    for (const c of n.children) visit(c);
  };
  visit(tree.root);
  return out;
}

/**
 * Where a coordinate click on a node lands: the centre of the part of its bounds inside the window
 * the tree came from (the root's bounds, on screen, and never left of or above the screen's
 * origin), rounded to whole pixels; null when no part of it is there (empty bounds, off screen).
 */
export function tapPoint(node: A11yBounds, window: A11yBounds): { x: number; y: number } | null {
  const left = Math.max(node.x, window.x, 0);
  const top = Math.max(node.y, window.y, 0);
  const right = Math.min(node.x + node.width, window.x + window.width);
  const bottom = Math.min(node.y + node.height, window.y + window.height);
  if (!(right > left && bottom > top)) return null;
  return { x: Math.floor((left + right) / 2), y: Math.floor((top + bottom) / 2) };
}
