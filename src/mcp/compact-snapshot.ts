/**
 * The compact text form of a normalized snapshot tree for agents: one line per node, its ref (`e12`,
 * exactly the tree's), a role word, its label, its state flags and its bounds, interactive nodes
 * first. Token-lean: a line is a few dozen bytes where the uiautomator XML spends hundreds. Pure.
 *
 *     e14 edit "Trips & \"ideas\"" #folder_name focused @131,940 818x126
 *     e17 button "CREATE" #button1 @784,1189 186x126
 *     e19 button "SHARE" #button3 disabled @110,1189 230x126
 *     e23 button >"Trip to Lisbon" #note_card long @42,474 996x280   (named by the first text inside)
 */
import type { Bounds, SnapshotNode } from '../snapshot/types.ts';

/** The fields of a node the compact form reads (the API's JSON tree and `normalizeSnapshot`'s alike). */
export type CompactNode = Pick<
  SnapshotNode,
  | 'ref'
  | 'className'
  | 'text'
  | 'contentDesc'
  | 'hint'
  | 'resourceId'
  | 'bounds'
  | 'visible'
  | 'enabled'
  | 'clickable'
  | 'longClickable'
  | 'focused'
  | 'scrollable'
  | 'checkable'
  | 'checked'
  | 'selected'
  | 'password'
  | 'covered'
> & { children: readonly CompactNode[] };

export interface CompactOptions {
  /** Only the interactive nodes (clickable, long-clickable, editable, checkable, scrollable). */
  interactiveOnly?: boolean;
  /** Only this node and its descendants (a ref of the same tree). */
  subtree?: string;
  /** Also covered nodes and nodes not visible to the user (left out by default, and counted). */
  includeHidden?: boolean;
}

export interface CompactSnapshot {
  text: string;
  /** The nodes written, in the order written. */
  refs: string[];
  /** Nodes left out because they are covered or off-screen (without `includeHidden`). */
  hidden: number;
}

/** Classes whose nodes take text: EditText and its subclasses, Compose text fields, search boxes. */
const EDITABLE_CLASS = /EditText|TextField|AutoCompleteTextView|SearchAutoComplete/;

/** Whether a node takes typed text (by its class: uiautomator has no `editable` attribute). */
export function isEditable(node: Pick<CompactNode, 'className'>): boolean {
  return EDITABLE_CLASS.test(node.className);
}

/** Whether an agent can act on the node: click, long-click, type, check or scroll it. */
export function isInteractive(node: CompactNode): boolean {
  return node.clickable || node.longClickable || node.checkable || node.scrollable || isEditable(node);
}

/**
 * One word for what the node is: `edit` (takes text), `button`, `check` (a checkbox or switch),
 * `radio`, `scroll` (a list or scroll view), `image`, `text`, `web`, `group` (a container) or `view`.
 */
export function roleOf(node: CompactNode): string {
  const cls = node.className;
  if (isEditable(node)) return 'edit';
  if (/RadioButton/.test(cls)) return 'radio';
  if (node.checkable || /CheckBox|Switch|Toggle/.test(cls)) return 'check';
  if (/Button/.test(cls)) return 'button';
  if (node.scrollable || /RecyclerView|ListView|ScrollView|ViewPager|GridView/.test(cls)) return 'scroll';
  if (/WebView/.test(cls)) return 'web';
  if (node.clickable) return 'button';
  if (/Image/.test(cls)) return 'image';
  if (/Text/.test(cls)) return 'text';
  return node.children.length > 0 ? 'group' : 'view';
}

/** A label as a JSON string (quotes, backslashes and control characters escaped), at most 80 characters. */
function quote(label: string): string {
  const chars = [...label];
  return JSON.stringify(chars.length > 80 ? `${chars.slice(0, 79).join('')}…` : label);
}

function bounds(b: Bounds | null): string {
  return b === null ? '' : ` @${b.x},${b.y} ${b.width}x${b.height}`;
}

/** One line: ref, role, label, short resource id, flags, bounds. */
export function compactLine(node: CompactNode): string {
  let line = `${node.ref} ${roleOf(node)}`;
  const label = node.text !== '' ? node.text : node.contentDesc;
  if (label !== '') line += ` ${quote(label)}`;
  else if (isInteractive(node)) {
    // A button made of other views (a card, a list row): named by the first text inside it.
    const inner = innerText(node);
    if (inner !== undefined) line += ` >${quote(inner)}`;
  }
  if (node.contentDesc !== '' && node.text !== '' && node.contentDesc !== node.text)
    line += ` desc=${quote(node.contentDesc)}`;
  if (node.hint !== '' && node.hint !== label) line += ` hint=${quote(node.hint)}`;
  if (node.resourceId !== '') {
    const slash = node.resourceId.lastIndexOf('/');
    line += ` #${slash === -1 ? node.resourceId : node.resourceId.slice(slash + 1)}`;
  }
  if (!node.enabled) line += ' disabled';
  if (node.focused) line += ' focused';
  if (node.checkable) line += node.checked ? ' checked' : ' unchecked';
  if (node.selected) line += ' selected';
  if (node.password) line += ' password';
  if (node.longClickable) line += ' long';
  if (node.covered) line += ' covered';
  if (!node.visible) line += ' offscreen';
  return line + bounds(node.bounds);
}

/** The first text (or content description) of a node's descendants, cut at 40 characters. */
function innerText(node: CompactNode): string | undefined {
  for (const inside of preorder(node.children)) {
    const text = inside.text !== '' ? inside.text : inside.contentDesc;
    if (text !== '') {
      const chars = [...text];
      return chars.length > 40 ? `${chars.slice(0, 39).join('')}…` : text;
    }
  }
  return undefined;
}

function* preorder(nodes: readonly CompactNode[]): Generator<CompactNode> {
  const stack = [...nodes].reverse();
  while (stack.length > 0) {
    const node = stack.pop() as CompactNode;
    yield node;
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as CompactNode);
  }
}

/** The node with `ref` in `windows`, or undefined. */
export function findNode(windows: readonly CompactNode[], ref: string): CompactNode | undefined {
  for (const node of preorder(windows)) if (node.ref === ref) return node;
  return undefined;
}

/**
 * The compact text of a tree (`windows`: its window roots): a header line, then the interactive
 * nodes, then the others, each group in document order. Throws RangeError when `subtree` names no node.
 */
export function renderCompactSnapshot(
  windows: readonly CompactNode[],
  options: CompactOptions = {},
): CompactSnapshot {
  let roots = windows;
  if (options.subtree !== undefined) {
    const root = findNode(windows, options.subtree);
    if (root === undefined) throw new RangeError(`no node ${options.subtree} in this snapshot`);
    roots = [root];
  }
  const interactive: string[] = [];
  const other: string[] = [];
  const refs: string[] = [];
  const otherRefs: string[] = [];
  let hidden = 0;
  for (const node of preorder(roots)) {
    if (!options.includeHidden && (node.covered || !node.visible)) {
      hidden++;
      continue;
    }
    if (isInteractive(node)) {
      interactive.push(compactLine(node));
      refs.push(node.ref);
    } else if (!options.interactiveOnly) {
      other.push(compactLine(node));
      otherRefs.push(node.ref);
    }
  }
  const counts = [`${interactive.length} interactive`];
  if (!options.interactiveOnly) counts.push(`${other.length} other`);
  if (hidden > 0) counts.push(`${hidden} covered or off-screen left out`);
  const lines = [`# ${counts.join(', ')}; ref role "label" #id flags @x,y wxh`, ...interactive];
  if (other.length > 0) lines.push('# other', ...other);
  return { text: lines.join('\n'), refs: [...refs, ...otherRefs], hidden };
}
