/**
 * The glass a11y service as a device runs it (the glass contract, `localabstract:glass-a11y`): ping, the
 * active window's tree with pre-order refs, and `set_text` / `click` actions on a node of the tree
 * served on this connection, with the seed's refusals. One instance per connection: the served tree
 * belongs to it.
 */
import {
  answerGlassLine,
  GlassRequestError,
  type GlassValue,
  glassInteger,
  glassOk,
  requiredString,
} from './line-protocol.ts';

export interface A11yNode {
  className: string | null;
  text: string | null;
  desc: string | null;
  /** [x, y, w, h] */
  bounds: readonly [number, number, number, number];
  editable: boolean;
  clickable: boolean;
  enabled: boolean;
  scrollable: boolean;
  children: readonly A11yNode[];
  /** The node's `<node>` tag in the device's uiautomator XML (document order), when it came from there. */
  source?: number;
  /**
   * A Jetpack Compose node (inside a `ComposeView`): ACTION_CLICK answers success and does nothing
   * (the glass contract's scope note), while a tap on its bounds acts.
   */
  compose?: boolean;
}

export interface A11yWindow {
  /** Null when the platform cannot name the window's package. */
  packageName: string | null;
  root: A11yNode;
}

export interface GlassA11yHost {
  /** The window the service would answer from now; null when there is none. */
  activeWindow(): A11yWindow | null;
  /** ACTION_SET_TEXT ("set_text", with text) or ACTION_CLICK ("click"); false when refused. */
  perform(node: A11yNode, action: 'set_text' | 'click', text: string | null): boolean;
}

/** Deepest nesting serialized; deeper nodes are left out (accessibility trees are far shallower). */
export const MAX_TREE_DEPTH = 256;

/** The tree object of the glass contract and the nodes by ref (pre-order from 0 at the root). */
export function serializeA11yTree(root: A11yNode): { tree: GlassValue; byRef: A11yNode[] } {
  const byRef: A11yNode[] = [];
  const node = (n: A11yNode, depth: number): Record<string, GlassValue> => {
    const o: Record<string, GlassValue> = { ref: byRef.length };
    byRef.push(n);
    o['class'] = n.className ?? '';
    if (n.text) o['text'] = n.text;
    if (n.desc) o['desc'] = n.desc;
    const [x, y, w, h] = n.bounds;
    o['bounds'] = { x, y, w, h };
    o['editable'] = n.editable;
    o['clickable'] = n.clickable;
    o['enabled'] = n.enabled;
    o['scrollable'] = n.scrollable;
    if (depth < MAX_TREE_DEPTH && n.children.length > 0)
      o['children'] = n.children.map((c) => node(c, depth + 1));
    return o;
  };
  return { tree: node(root, 0), byRef };
}

export class GlassA11yProtocol {
  readonly #host: GlassA11yHost;
  #servedRefs: A11yNode[] | null = null;
  #servedPackage: string | null = null;

  constructor(host: GlassA11yHost) {
    this.#host = host;
  }

  handle(line: string): string {
    return answerGlassLine(line, (id, request) => {
      const op = requiredString(request, 'op');
      if (op === 'ping') return glassOk(id);
      if (op === 'tree') {
        if (typeof request['package'] !== 'string' || !Object.hasOwn(request, 'package')) {
          throw new GlassRequestError('missing field: package (a string)');
        }
        const window = this.#host.activeWindow();
        if (window === null) throw new GlassRequestError('no active window');
        const { tree, byRef } = serializeA11yTree(window.root);
        this.#servedRefs = byRef;
        this.#servedPackage = window.packageName;
        return glassOk(id, window.packageName === null ? { tree } : { tree, package: window.packageName });
      }
      if (op === 'action') {
        this.#action(request);
        return glassOk(id);
      }
      throw new GlassRequestError(`unknown op: ${op}`);
    });
  }

  #action(request: Record<string, unknown>): void {
    const ref = glassInteger(Object.hasOwn(request, 'ref') ? request['ref'] : undefined);
    if (ref === null) throw new GlassRequestError('missing field: ref (an integer)');
    const action = Object.hasOwn(request, 'action') ? request['action'] : undefined;
    if (action !== 'set_text' && action !== 'click') {
      throw new GlassRequestError('action must be "set_text" or "click"');
    }
    const text = Object.hasOwn(request, 'text') ? request['text'] : undefined;
    if (action === 'set_text' && typeof text !== 'string') {
      throw new GlassRequestError('missing field: text (a string, for set_text)');
    }
    if (this.#servedRefs === null) throw new GlassRequestError('no tree has been served on this connection');
    const current = this.#host.activeWindow()?.packageName ?? null;
    if (this.#servedPackage === null || current === null) {
      throw new GlassRequestError(
        `cannot confirm the window: ${this.#servedPackage === null ? "the served tree's window" : 'the active window'} has no package name`,
      );
    }
    if (this.#servedPackage !== current) {
      throw new GlassRequestError(
        `the active window changed since the tree was served (served ${this.#servedPackage}, now ${current})`,
      );
    }
    const node = ref >= 0 && ref < this.#servedRefs.length ? this.#servedRefs[ref] : undefined;
    if (node === undefined) throw new GlassRequestError(`unknown ref ${ref}`);
    if (!this.#host.perform(node, action, typeof text === 'string' ? text : null)) {
      throw new GlassRequestError(`${action} was refused by ref ${ref}`);
    }
  }
}
