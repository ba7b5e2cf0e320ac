/**
 * A single-pass scanner over the uiautomator subset of XML: prolog, comments, processing
 * instructions, `<hierarchy>`, nested and self-closing `<node>` elements, attributes in single or
 * double quotes, predefined and numeric character references, any whitespace incl. CRLF. It checks
 * well-formedness (one `<hierarchy>` root, matching end tags, no text outside the root, no '<'
 * inside a tag) and reads the attributes the snapshot keeps into one reused record, then reports the
 * structure to a `ScanSink` (the tree semantics live in `tree-builder.ts`). Unknown elements are
 * reported as plain elements; unknown (vendor) attributes are skipped. Anything after
 * `</hierarchy>` (e.g. "UI hierchary dumped to: /dev/tty") is ignored. Malformed XML throws
 * `XmlError` with the offset.
 *
 * Speed: `indexOf`/`charCodeAt` over the string, attribute names matched against the one uiautomator
 * writes next (one `startsWith`), else by length + first char + `startsWith` (no name strings
 * allocated), booleans/ints/bounds parsed in place, only kept strings sliced, entities decoded only when a '&' lies inside the value (one amortised `indexOf('&')`).
 */
import type { Bounds } from './types.ts';
import { decodeEntities, isNameEnd, isSpace, parseBounds, parseIntIn, XmlError } from './xml-values.ts';

/** `drawing-order` absent or malformed. */
export const NO_ORDER = -2147483648;

/** The attributes of the start tag being scanned. One record, reset per tag: copy what you keep. */
export interface ScannedAttributes {
  text: string;
  contentDesc: string;
  resourceId: string;
  className: string;
  pkg: string;
  hint: string;
  index: number;
  bounds: Bounds | null;
  visible: boolean;
  enabled: boolean;
  clickable: boolean;
  longClickable: boolean;
  focusable: boolean;
  focused: boolean;
  scrollable: boolean;
  checkable: boolean;
  checked: boolean;
  selected: boolean;
  password: boolean;
  canScrollForward: boolean | null;
  canScrollBackward: boolean | null;
  drawingOrder: number;
  rotation: number | null;
  windowIndex: number | null;
  windowType: number | null;
  windowLayer: number | null;
  windowActive: boolean | null;
  windowFocused: boolean | null;
  windowBounds: Bounds | null;
  displayId: number | null;
}

/**
 * What the scanner reports, in document order. Every `openNode(…, false)` and `openElement()` is
 * matched by one `closeNode()` / `closeElement()`; a self-closing `<node/>` is only opened.
 */
export interface ScanSink {
  /** The root `<hierarchy>` start tag (its `rotation` is in `a`). */
  openHierarchy(a: ScannedAttributes): void;
  /** A `<node>` start tag inside the root. */
  openNode(a: ScannedAttributes, selfClosing: boolean): void;
  closeNode(): void;
  /** Any other element inside the root (its `<node>` descendants belong to the enclosing node). */
  openElement(): void;
  /** End of the root, or of another element; `hierarchy` when the element is named `hierarchy`. */
  closeElement(hierarchy: boolean): void;
}

/** Scan one document into `sink`. Throws `XmlError` (nothing else) for malformed XML. */
export function scanUiXml(xml: string, sink: ScanSink): void {
  new Scanner(xml, sink).run();
}

function emptyAttributes(): ScannedAttributes {
  return {
    text: '',
    contentDesc: '',
    resourceId: '',
    className: '',
    pkg: '',
    hint: '',
    index: -1,
    bounds: null,
    visible: true,
    enabled: false,
    clickable: false,
    longClickable: false,
    focusable: false,
    focused: false,
    scrollable: false,
    checkable: false,
    checked: false,
    selected: false,
    password: false,
    canScrollForward: null,
    canScrollBackward: null,
    drawingOrder: NO_ORDER,
    rotation: null,
    windowIndex: null,
    windowType: null,
    windowLayer: null,
    windowActive: null,
    windowFocused: null,
    windowBounds: null,
    displayId: null,
  };
}

function resetAttributes(a: ScannedAttributes): void {
  a.text = '';
  a.contentDesc = '';
  a.resourceId = '';
  a.className = '';
  a.pkg = '';
  a.hint = '';
  a.index = -1;
  a.bounds = null;
  a.visible = true;
  a.enabled = false;
  a.clickable = false;
  a.longClickable = false;
  a.focusable = false;
  a.focused = false;
  a.scrollable = false;
  a.checkable = false;
  a.checked = false;
  a.selected = false;
  a.password = false;
  a.canScrollForward = null;
  a.canScrollBackward = null;
  a.drawingOrder = NO_ORDER;
  a.rotation = null;
  a.windowIndex = null;
  a.windowType = null;
  a.windowLayer = null;
  a.windowActive = null;
  a.windowFocused = null;
  a.windowBounds = null;
  a.displayId = null;
}

/**
 * The attributes kept, by id, in the order uiautomator writes them (`NAMES[id]`): a start tag's
 * attributes are first matched against the name that usually follows the previous one
 * (`NEXT[id]`), with one comparison instead of a scan of the name.
 */
const NAMES = [
  'index',
  'text',
  'resource-id',
  'class',
  'package',
  'content-desc',
  'checkable',
  'checked',
  'clickable',
  'enabled',
  'focusable',
  'focused',
  'scrollable',
  'long-clickable',
  'password',
  'selected',
  'visible-to-user',
  'bounds',
  'drawing-order',
  'hint',
  'rotation',
  'display-id',
  'window-index',
  'window-type',
  'window-layer',
  'window-active',
  'window-focused',
  'window-bounds',
  'can-scroll-forward',
  'can-scroll-backward',
] as const;
const INDEX = 0;
const TEXT = 1;
const RESOURCE_ID = 2;
const CLASS = 3;
const PACKAGE = 4;
const CONTENT_DESC = 5;
const CHECKABLE = 6;
const CHECKED = 7;
const CLICKABLE = 8;
const ENABLED = 9;
const FOCUSABLE = 10;
const FOCUSED = 11;
const SCROLLABLE = 12;
const LONG_CLICKABLE = 13;
const PASSWORD = 14;
const SELECTED = 15;
const VISIBLE_TO_USER = 16;
const BOUNDS = 17;
const DRAWING_ORDER = 18;
const HINT = 19;
const ROTATION = 20;
const DISPLAY_ID = 21;
const WINDOW_INDEX = 22;
const WINDOW_TYPE = 23;
const WINDOW_LAYER = 24;
const WINDOW_ACTIVE = 25;
const WINDOW_FOCUSED = 26;
const WINDOW_BOUNDS = 27;
const CAN_SCROLL_FORWARD = 28;
const CAN_SCROLL_BACKWARD = 29;
/** `NEXT[id]`: the name expected after `id` (the start of a tag is `START`); -1: none. */
const START = NAMES.length;
const NEXT = new Int8Array(START + 1).fill(-1);
for (let id = 0; id < DRAWING_ORDER; id++) NEXT[id] = id + 1;
NEXT[DRAWING_ORDER] = HINT;
NEXT[START] = INDEX;

class Scanner {
  readonly #xml: string;
  readonly #sink: ScanSink;
  #nextAmp = -1;
  // The first '<' after the last start tag's name (-1: none, or not searched yet).
  #nextLt = -1;
  // Recently seen `class` and `package` values (a dump repeats a few dozen): equal values share one
  // string instead of one slice per node. Entity-bearing values are never cached.
  readonly #classes: string[] = [];
  readonly #packages: string[] = [];
  // Open elements: the name for `<hierarchy>` and unknown elements, null for `<node>`.
  #open: Array<string | null> = [];
  #sawHierarchy = false;
  #hierarchyClosed = false;
  #a: ScannedAttributes = emptyAttributes();

  constructor(xml: string, sink: ScanSink) {
    this.#xml = xml;
    this.#sink = sink;
  }

  run(): void {
    const xml = this.#xml;
    const length = xml.length;
    let pos = 0;
    if (xml.charCodeAt(0) === 0xfeff) pos = 1;
    for (;;) {
      // The '<' after the previous start tag was found while scanning it (`#nextLt`).
      const lt = this.#nextLt >= pos ? this.#nextLt : xml.indexOf('<', pos);
      if (lt === -1) {
        this.#checkText(pos, length);
        break;
      }
      this.#checkText(pos, lt);
      const c = xml.charCodeAt(lt + 1);
      if (c === 47 /* / */) {
        pos = this.#endTag(lt);
      } else if (c === 63 /* ? */) {
        const close = xml.indexOf('?>', lt + 2);
        if (close === -1) throw new XmlError(lt, 'unterminated processing instruction');
        pos = close + 2;
      } else if (c === 33 /* ! */) {
        pos = this.#markup(lt);
      } else {
        pos = this.#startTag(lt);
      }
      if (this.#hierarchyClosed) break;
    }
    if (!this.#sawHierarchy) throw new XmlError(Math.min(pos, length), 'no <hierarchy> element');
    if (!this.#hierarchyClosed) {
      const open = this.#open[this.#open.length - 1] ?? 'hierarchy';
      throw new XmlError(length, `unexpected end of input inside <${open}>`);
    }
  }

  /** Character data between tags: only whitespace is meaningful in uiautomator; text is ignored, but not outside the root. */
  #checkText(start: number, end: number): void {
    if (start >= end) return;
    if (this.#open.length > 0) return;
    const xml = this.#xml;
    for (let i = start; i < end; i++) {
      if (!isSpace(xml.charCodeAt(i))) {
        throw new XmlError(
          i,
          this.#sawHierarchy ? 'text after the root element' : 'text before the root element',
        );
      }
    }
  }

  #markup(lt: number): number {
    const xml = this.#xml;
    if (xml.startsWith('<!--', lt)) {
      const close = xml.indexOf('-->', lt + 4);
      if (close === -1) throw new XmlError(lt, 'unterminated comment');
      return close + 3;
    }
    if (xml.startsWith('<![CDATA[', lt)) {
      if (this.#open.length === 0) throw new XmlError(lt, 'CDATA outside the root element');
      const close = xml.indexOf(']]>', lt + 9);
      if (close === -1) throw new XmlError(lt, 'unterminated CDATA section');
      return close + 3;
    }
    if (xml.startsWith('<!DOCTYPE', lt) && this.#open.length === 0 && !this.#sawHierarchy) {
      const close = xml.indexOf('>', lt);
      if (close === -1 || xml.lastIndexOf('[', close) > lt) throw new XmlError(lt, 'unsupported DOCTYPE');
      return close + 1;
    }
    throw new XmlError(lt, "unexpected '<!'");
  }

  #endTag(lt: number): number {
    const xml = this.#xml;
    const depth = this.#open.length;
    if (depth === 0) throw new XmlError(lt, 'end tag without a start tag');
    let p = lt + 2;
    const nameStart = p;
    while (!isNameEnd(xml.charCodeAt(p))) p++;
    const nameEnd = p;
    while (isSpace(xml.charCodeAt(p))) p++;
    if (xml.charCodeAt(p) !== 62) throw new XmlError(p, "expected '>' in end tag");
    const expected = this.#open[depth - 1] ?? 'node';
    if (nameEnd - nameStart !== expected.length || !xml.startsWith(expected, nameStart)) {
      throw new XmlError(lt, `end tag </${xml.slice(nameStart, nameEnd)}> does not match <${expected}>`);
    }
    this.#close();
    return p + 1;
  }

  #close(): void {
    const name = this.#open.pop();
    if (name === null) {
      this.#sink.closeNode();
    } else {
      const hierarchy = name === 'hierarchy';
      this.#sink.closeElement(hierarchy);
      if (hierarchy) this.#hierarchyClosed = true;
    }
  }

  #startTag(lt: number): number {
    const xml = this.#xml;
    let p = lt + 1;
    const nameStart = p;
    while (!isNameEnd(xml.charCodeAt(p))) p++;
    const nameLength = p - nameStart;
    if (nameLength === 0) throw new XmlError(lt, "expected an element name after '<'");
    const isNode = nameLength === 4 && xml.startsWith('node', nameStart);
    const isHierarchy = !isNode && nameLength === 9 && xml.startsWith('hierarchy', nameStart);
    const depth = this.#open.length;
    if (depth === 0) {
      if (this.#sawHierarchy) throw new XmlError(lt, 'more than one root element');
      if (!isHierarchy)
        throw new XmlError(lt, `root element is <${xml.slice(nameStart, p)}>, not <hierarchy>`);
    }
    const a = this.#a;
    resetAttributes(a);
    const end = this.#attributes(p, lt);
    const selfClosing = xml.charCodeAt(end - 2) === 47;
    if (depth === 0) {
      this.#sawHierarchy = true;
      this.#open.push('hierarchy');
      this.#sink.openHierarchy(a);
      if (selfClosing) this.#close();
    } else if (isNode) {
      if (!selfClosing) this.#open.push(null);
      this.#sink.openNode(a, selfClosing);
    } else {
      this.#open.push(isHierarchy ? 'hierarchy' : xml.slice(nameStart, nameStart + nameLength));
      this.#sink.openElement();
      if (selfClosing) this.#close();
    }
    return end;
  }

  /** Scan attributes from `start` to the end of the start tag; returns the offset after '>'. */
  #attributes(start: number, lt: number): number {
    const xml = this.#xml;
    const a = this.#a;
    // The next '<' bounds the tag: a value or the closing '>' beyond it means '<' inside the tag.
    // Kept: it is where the next tag starts (`run`).
    const nextLt = xml.indexOf('<', start);
    this.#nextLt = nextLt;
    const limit = nextLt === -1 ? xml.length : nextLt;
    let p = start;
    let last: number = START;
    for (;;) {
      let c = xml.charCodeAt(p);
      const hadSpace = isSpace(c);
      while (isSpace(c)) c = xml.charCodeAt(++p);
      if (p > limit) throw new XmlError(limit, "'<' inside a tag");
      if (c === 62 /* > */) return p + 1;
      if (c === 47 /* / */) {
        if (xml.charCodeAt(p + 1) !== 62) throw new XmlError(p, "expected '>' after '/'");
        return p + 2;
      }
      if (Number.isNaN(c)) throw new XmlError(lt, 'unterminated start tag');
      if (!hadSpace) throw new XmlError(p, 'expected whitespace before an attribute');
      const nameStart = p;
      // The name expected here, followed by '=' (the name's end): known without scanning it.
      let id = NEXT[last] as number;
      if (id >= 0 && this.#named(id, p)) {
        p += (NAMES[id] as string).length;
        c = 61;
      } else {
        // Letters and '-' (every name a dump has) by one comparison each, then the general rule.
        while (c >= 97 || c === 45) c = xml.charCodeAt(++p);
        while (!isNameEnd(c)) c = xml.charCodeAt(++p);
        if (p === nameStart) throw new XmlError(p, 'expected an attribute name');
        id = this.#nameId(nameStart, p - nameStart);
      }
      while (isSpace(c)) c = xml.charCodeAt(++p);
      if (c !== 61 /* = */) throw new XmlError(p, "expected '=' after an attribute name");
      c = xml.charCodeAt(++p);
      while (isSpace(c)) c = xml.charCodeAt(++p);
      if (c !== 34 && c !== 39) throw new XmlError(p, 'expected a quoted attribute value');
      const valueStart = p + 1;
      const valueEnd = xml.indexOf(c === 34 ? '"' : "'", valueStart);
      if (valueEnd === -1) throw new XmlError(p, 'unterminated attribute value');
      if (valueEnd > limit) throw new XmlError(limit, "'<' in an attribute value");
      p = valueEnd + 1;
      if (id >= 0) {
        this.#store(a, id, valueStart, valueEnd);
        last = id;
      }
    }
  }

  /** The value `xml[start, end)` as a string, character references decoded. */
  #string(start: number, end: number): string {
    if (start === end) return '';
    const xml = this.#xml;
    let amp = this.#nextAmp;
    if (amp !== -2 && amp < start) {
      amp = xml.indexOf('&', start);
      if (amp === -1) amp = -2; // no '&' anywhere after: never search again
      this.#nextAmp = amp;
    }
    const raw = amp >= 0 && amp < end;
    return raw ? decodeEntities(xml, start, end) : xml.slice(start, end);
  }

  /** `#string`, sharing the string with an equal recent value from `cache` (≤ 16 kept). */
  #shared(start: number, end: number, cache: string[]): string {
    const length = end - start;
    if (length === 0) return '';
    const xml = this.#xml;
    // Equal length and last character first: most entries are ruled out without a comparison call.
    const last = xml.charCodeAt(end - 1);
    for (let i = 0; i < cache.length; i++) {
      const s = cache[i] as string;
      if (s.length === length && s.charCodeAt(length - 1) === last && xml.startsWith(s, start)) return s;
    }
    let amp = this.#nextAmp;
    if (amp !== -2 && amp < start) {
      amp = xml.indexOf('&', start);
      if (amp === -1) amp = -2;
      this.#nextAmp = amp;
    }
    if (amp >= 0 && amp < end) return decodeEntities(xml, start, end);
    const value = xml.slice(start, end);
    if (cache.length < 16) cache.push(value);
    else cache[this.#evict++ & 15] = value;
    return value;
  }

  #evict = 0;

  #bool(start: number, end: number): boolean {
    return end - start === 4 && this.#xml.charCodeAt(start) === 116;
  }

  /** Whether the attribute `id` is named at `p`, followed by '=' (literal names: compiled inline). */
  #named(id: number, p: number): boolean {
    const xml = this.#xml;
    switch (id) {
      case INDEX:
        return xml.startsWith('index=', p);
      case TEXT:
        return xml.startsWith('text=', p);
      case RESOURCE_ID:
        return xml.startsWith('resource-id=', p);
      case CLASS:
        return xml.startsWith('class=', p);
      case PACKAGE:
        return xml.startsWith('package=', p);
      case CONTENT_DESC:
        return xml.startsWith('content-desc=', p);
      case CHECKABLE:
        return xml.startsWith('checkable=', p);
      case CHECKED:
        return xml.startsWith('checked=', p);
      case CLICKABLE:
        return xml.startsWith('clickable=', p);
      case ENABLED:
        return xml.startsWith('enabled=', p);
      case FOCUSABLE:
        return xml.startsWith('focusable=', p);
      case FOCUSED:
        return xml.startsWith('focused=', p);
      case SCROLLABLE:
        return xml.startsWith('scrollable=', p);
      case LONG_CLICKABLE:
        return xml.startsWith('long-clickable=', p);
      case PASSWORD:
        return xml.startsWith('password=', p);
      case SELECTED:
        return xml.startsWith('selected=', p);
      case VISIBLE_TO_USER:
        return xml.startsWith('visible-to-user=', p);
      case BOUNDS:
        return xml.startsWith('bounds=', p);
      case DRAWING_ORDER:
        return xml.startsWith('drawing-order=', p);
      case HINT:
        return xml.startsWith('hint=', p);
      case ROTATION:
        return xml.startsWith('rotation=', p);
      case DISPLAY_ID:
        return xml.startsWith('display-id=', p);
      case WINDOW_INDEX:
        return xml.startsWith('window-index=', p);
      case WINDOW_TYPE:
        return xml.startsWith('window-type=', p);
      case WINDOW_LAYER:
        return xml.startsWith('window-layer=', p);
      case WINDOW_ACTIVE:
        return xml.startsWith('window-active=', p);
      case WINDOW_FOCUSED:
        return xml.startsWith('window-focused=', p);
      case WINDOW_BOUNDS:
        return xml.startsWith('window-bounds=', p);
      case CAN_SCROLL_FORWARD:
        return xml.startsWith('can-scroll-forward=', p);
      case CAN_SCROLL_BACKWARD:
        return xml.startsWith('can-scroll-backward=', p);
      default:
        return false;
    }
  }

  /** The id of the kept attribute named `xml[n, n + length)`, or -1 for a name we do not keep. */
  #nameId(n: number, length: number): number {
    const xml = this.#xml;
    const c0 = xml.charCodeAt(n);
    switch (length) {
      case 4:
        if (c0 === 116 && xml.startsWith('text', n)) return TEXT;
        if (c0 === 104 && xml.startsWith('hint', n)) return HINT;
        return -1;
      case 5:
        if (c0 === 99 && xml.startsWith('class', n)) return CLASS;
        if (c0 === 105 && xml.startsWith('index', n)) return INDEX;
        return -1;
      case 6:
        if (c0 === 98 && xml.startsWith('bounds', n)) return BOUNDS;
        return -1;
      case 7:
        if (c0 === 112 && xml.startsWith('package', n)) return PACKAGE;
        if (c0 === 99 && xml.startsWith('checked', n)) return CHECKED;
        if (c0 === 101 && xml.startsWith('enabled', n)) return ENABLED;
        if (c0 === 102 && xml.startsWith('focused', n)) return FOCUSED;
        return -1;
      case 8:
        if (c0 === 112 && xml.startsWith('password', n)) return PASSWORD;
        if (c0 === 115 && xml.startsWith('selected', n)) return SELECTED;
        if (c0 === 114 && xml.startsWith('rotation', n)) return ROTATION;
        return -1;
      case 9:
        if (c0 === 99 && xml.startsWith('clickable', n)) return CLICKABLE;
        if (c0 === 99 && xml.startsWith('checkable', n)) return CHECKABLE;
        if (c0 === 102 && xml.startsWith('focusable', n)) return FOCUSABLE;
        return -1;
      case 10:
        if (c0 === 115 && xml.startsWith('scrollable', n)) return SCROLLABLE;
        if (c0 === 100 && xml.startsWith('display-id', n)) return DISPLAY_ID;
        return -1;
      case 11:
        if (c0 === 114 && xml.startsWith('resource-id', n)) return RESOURCE_ID;
        if (c0 === 119 && xml.startsWith('window-type', n)) return WINDOW_TYPE;
        return -1;
      case 12:
        if (c0 === 99 && xml.startsWith('content-desc', n)) return CONTENT_DESC;
        if (c0 === 119 && xml.startsWith('window-index', n)) return WINDOW_INDEX;
        if (c0 === 119 && xml.startsWith('window-layer', n)) return WINDOW_LAYER;
        return -1;
      case 13:
        if (c0 === 100 && xml.startsWith('drawing-order', n)) return DRAWING_ORDER;
        if (c0 === 119 && xml.startsWith('window-active', n)) return WINDOW_ACTIVE;
        if (c0 === 119 && xml.startsWith('window-bounds', n)) return WINDOW_BOUNDS;
        return -1;
      case 14:
        if (c0 === 108 && xml.startsWith('long-clickable', n)) return LONG_CLICKABLE;
        if (c0 === 119 && xml.startsWith('window-focused', n)) return WINDOW_FOCUSED;
        return -1;
      case 15:
        if (c0 === 118 && xml.startsWith('visible-to-user', n)) return VISIBLE_TO_USER;
        return -1;
      case 18:
        if (c0 === 99 && xml.startsWith('can-scroll-forward', n)) return CAN_SCROLL_FORWARD;
        return -1;
      case 19:
        if (c0 === 99 && xml.startsWith('can-scroll-backward', n)) return CAN_SCROLL_BACKWARD;
        return -1;
      default:
        // An attribute we do not keep (vendor extras such as `xpos`).
        return -1;
    }
  }

  /** Keep the value `[vs, ve)` of the attribute with id `id`. */
  #store(a: ScannedAttributes, id: number, vs: number, ve: number): void {
    const xml = this.#xml;
    switch (id) {
      case INDEX:
        a.index = parseIntIn(xml, vs, ve) ?? -1;
        return;
      case TEXT:
        a.text = this.#string(vs, ve);
        return;
      case RESOURCE_ID:
        a.resourceId = this.#string(vs, ve);
        return;
      case CLASS:
        a.className = this.#shared(vs, ve, this.#classes);
        return;
      case PACKAGE:
        a.pkg = this.#shared(vs, ve, this.#packages);
        return;
      case CONTENT_DESC:
        a.contentDesc = this.#string(vs, ve);
        return;
      case CHECKABLE:
        a.checkable = this.#bool(vs, ve);
        return;
      case CHECKED:
        a.checked = this.#bool(vs, ve);
        return;
      case CLICKABLE:
        a.clickable = this.#bool(vs, ve);
        return;
      case ENABLED:
        a.enabled = this.#bool(vs, ve);
        return;
      case FOCUSABLE:
        a.focusable = this.#bool(vs, ve);
        return;
      case FOCUSED:
        a.focused = this.#bool(vs, ve);
        return;
      case SCROLLABLE:
        a.scrollable = this.#bool(vs, ve);
        return;
      case LONG_CLICKABLE:
        a.longClickable = this.#bool(vs, ve);
        return;
      case PASSWORD:
        a.password = this.#bool(vs, ve);
        return;
      case SELECTED:
        a.selected = this.#bool(vs, ve);
        return;
      case VISIBLE_TO_USER:
        a.visible = this.#bool(vs, ve);
        return;
      case BOUNDS:
        a.bounds = parseBounds(xml, vs, ve);
        return;
      case DRAWING_ORDER:
        a.drawingOrder = parseIntIn(xml, vs, ve) ?? NO_ORDER;
        return;
      case HINT:
        a.hint = this.#string(vs, ve);
        return;
      case ROTATION:
        a.rotation = parseIntIn(xml, vs, ve);
        return;
      case DISPLAY_ID:
        a.displayId = parseIntIn(xml, vs, ve);
        return;
      case WINDOW_INDEX:
        a.windowIndex = parseIntIn(xml, vs, ve);
        return;
      case WINDOW_TYPE:
        a.windowType = parseIntIn(xml, vs, ve);
        return;
      case WINDOW_LAYER:
        a.windowLayer = parseIntIn(xml, vs, ve);
        return;
      case WINDOW_ACTIVE:
        a.windowActive = this.#bool(vs, ve);
        return;
      case WINDOW_FOCUSED:
        a.windowFocused = this.#bool(vs, ve);
        return;
      case WINDOW_BOUNDS:
        a.windowBounds = parseBounds(xml, vs, ve);
        return;
      case CAN_SCROLL_FORWARD:
        a.canScrollForward = this.#bool(vs, ve);
        return;
      case CAN_SCROLL_BACKWARD:
        a.canScrollBackward = this.#bool(vs, ve);
        return;
      default:
    }
  }
}
