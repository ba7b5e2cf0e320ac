/**
 * Writes uiautomator XML the way `uiautomator dump` does (Android's XmlSerializer): one line, the
 * standalone declaration, `<hierarchy rotation="N">`, leaf nodes as `<node ... />`, attributes in
 * uiautomator's order. Window roots may carry the snapshot helper's window metadata attributes.
 */

export type Bounds = readonly [left: number, top: number, right: number, bottom: number];

export interface WindowMeta {
  index: number;
  /** AccessibilityWindowInfo type: 1 application, 2 input method, 3 system, 4 accessibility overlay. */
  type: number;
  layer: number;
  active: boolean;
  focused: boolean;
  bounds: Bounds;
}

export interface UiNode {
  className: string;
  packageName: string;
  bounds: Bounds;
  text?: string;
  resourceId?: string;
  contentDesc?: string;
  hint?: string;
  checkable?: boolean;
  checked?: boolean;
  clickable?: boolean;
  enabled?: boolean;
  focusable?: boolean;
  focused?: boolean;
  scrollable?: boolean;
  longClickable?: boolean;
  password?: boolean;
  selected?: boolean;
  visible?: boolean;
  drawingOrder?: number;
  window?: WindowMeta;
  children?: UiNode[];
}

export const XML_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";

/**
 * The helper's attribute escaping (UiXmlWriter.escape): markup characters as entities; tab, LF and
 * CR as references; what XML 1.0 cannot carry even as a reference (the other C0 controls, unpaired
 * surrogates, U+FFFE, U+FFFF) dropped, so the document is always well-formed XML 1.0; every other
 * code point raw (a surrogate pair stays one character).
 */
export function escapeAttribute(value: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    let rep: string | undefined;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = value.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i += 1; // a pair: kept as is
        continue;
      }
      rep = '';
    } else if (c === 38) rep = '&amp;';
    else if (c === 60) rep = '&lt;';
    else if (c === 62) rep = '&gt;';
    else if (c === 34) rep = '&quot;';
    else if (c === 9 || c === 10 || c === 13) rep = `&#${c};`;
    else if (c < 32 || c === 0xfffe || c === 0xffff) rep = '';
    if (rep !== undefined) {
      out += value.slice(last, i) + rep;
      last = i + 1;
    }
  }
  return last === 0 ? value : out + value.slice(last);
}

function formatBounds(b: Bounds): string {
  return `[${b[0]},${b[1]}][${b[2]},${b[3]}]`;
}

function writeNode(node: UiNode, index: number, parts: string[]): void {
  const attr = (name: string, value: string): void => {
    parts.push(` ${name}="${escapeAttribute(value)}"`);
  };
  const flag = (name: string, value: boolean | undefined): void => {
    parts.push(` ${name}="${value === true ? 'true' : 'false'}"`);
  };
  parts.push(`<node index="${index}"`);
  const w = node.window;
  if (w !== undefined) {
    parts.push(
      ` window-index="${w.index}" window-type="${w.type}" window-layer="${w.layer}" window-active="${w.active}"` +
        ` window-focused="${w.focused}" window-bounds="${formatBounds(w.bounds)}"`,
    );
  }
  attr('text', node.text ?? '');
  attr('resource-id', node.resourceId ?? '');
  attr('class', node.className);
  attr('package', node.packageName);
  attr('content-desc', node.contentDesc ?? '');
  flag('checkable', node.checkable);
  flag('checked', node.checked);
  flag('clickable', node.clickable);
  flag('enabled', node.enabled ?? true);
  flag('focusable', node.focusable);
  flag('focused', node.focused);
  flag('scrollable', node.scrollable);
  flag('long-clickable', node.longClickable);
  flag('password', node.password);
  flag('selected', node.selected);
  flag('visible-to-user', node.visible ?? true);
  attr('bounds', formatBounds(node.bounds));
  if (node.drawingOrder !== undefined) attr('drawing-order', String(node.drawingOrder));
  if (node.hint !== undefined) attr('hint', node.hint);
  const children = node.children ?? [];
  if (children.length === 0) {
    parts.push(' />');
    return;
  }
  parts.push('>');
  children.forEach((child, i) => {
    writeNode(child, i, parts);
  });
  parts.push('</node>');
}

/** Serialize window roots into one uiautomator document. */
export function writeUiXml(roots: readonly UiNode[], rotation = 0): string {
  const parts: string[] = [XML_DECLARATION, `<hierarchy rotation="${rotation}">`];
  roots.forEach((root, i) => {
    writeNode(root, i, parts);
  });
  parts.push('</hierarchy>');
  return parts.join('');
}
