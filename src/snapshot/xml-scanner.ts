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
 * Speed: `indexOf`/`charCodeAt` over the string, attribute names matched by length + first char +
 * `startsWith` (no name strings allocated), booleans/ints/bounds parsed in place, only kept strings
 * sliced, entities decoded only when a '&' lies inside the value (one amortised `indexOf('&')`).
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

class Scanner {
  readonly #xml: string;
  readonly #sink: ScanSink;
  #nextAmp = -1;
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
      const lt = xml.indexOf('<', pos);
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
    const nextLt = xml.indexOf('<', start);
    const limit = nextLt === -1 ? xml.length : nextLt;
    let p = start;
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
      while (!isNameEnd(c)) c = xml.charCodeAt(++p);
      const nameEnd = p;
      if (nameEnd === nameStart) throw new XmlError(p, 'expected an attribute name');
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
      this.#attribute(a, nameStart, nameEnd - nameStart, valueStart, valueEnd);
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
    for (let i = 0; i < cache.length; i++) {
      const s = cache[i] as string;
      if (s.length === length && xml.startsWith(s, start)) return s;
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

  /** Keep one attribute (name at `n`, `length` long; value `[vs, ve)`); other names are skipped. */
  #attribute(a: ScannedAttributes, n: number, length: number, vs: number, ve: number): void {
    const xml = this.#xml;
    const c0 = xml.charCodeAt(n);
    switch (length) {
      case 4:
        if (c0 === 116 && xml.startsWith('text', n)) a.text = this.#string(vs, ve);
        else if (c0 === 104 && xml.startsWith('hint', n)) a.hint = this.#string(vs, ve);
        return;
      case 5:
        if (c0 === 99 && xml.startsWith('class', n)) a.className = this.#shared(vs, ve, this.#classes);
        else if (c0 === 105 && xml.startsWith('index', n)) a.index = parseIntIn(xml, vs, ve) ?? -1;
        return;
      case 6:
        if (c0 === 98 && xml.startsWith('bounds', n)) a.bounds = parseBounds(xml, vs, ve);
        return;
      case 7:
        if (c0 === 112 && xml.startsWith('package', n)) a.pkg = this.#shared(vs, ve, this.#packages);
        else if (c0 === 99 && xml.startsWith('checked', n)) a.checked = this.#bool(vs, ve);
        else if (c0 === 101 && xml.startsWith('enabled', n)) a.enabled = this.#bool(vs, ve);
        else if (c0 === 102 && xml.startsWith('focused', n)) a.focused = this.#bool(vs, ve);
        return;
      case 8:
        if (c0 === 112 && xml.startsWith('password', n)) a.password = this.#bool(vs, ve);
        else if (c0 === 115 && xml.startsWith('selected', n)) a.selected = this.#bool(vs, ve);
        else if (c0 === 114 && xml.startsWith('rotation', n)) a.rotation = parseIntIn(xml, vs, ve);
        return;
      case 9:
        if (c0 === 99) {
          if (xml.startsWith('clickable', n)) a.clickable = this.#bool(vs, ve);
          else if (xml.startsWith('checkable', n)) a.checkable = this.#bool(vs, ve);
        } else if (c0 === 102 && xml.startsWith('focusable', n)) a.focusable = this.#bool(vs, ve);
        return;
      case 10:
        if (c0 === 115 && xml.startsWith('scrollable', n)) a.scrollable = this.#bool(vs, ve);
        else if (c0 === 100 && xml.startsWith('display-id', n)) a.displayId = parseIntIn(xml, vs, ve);
        return;
      case 11:
        if (c0 === 114 && xml.startsWith('resource-id', n)) a.resourceId = this.#string(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-type', n)) a.windowType = parseIntIn(xml, vs, ve);
        return;
      case 12:
        if (c0 === 99 && xml.startsWith('content-desc', n)) a.contentDesc = this.#string(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-index', n)) a.windowIndex = parseIntIn(xml, vs, ve);
        else if (c0 === 119 && xml.startsWith('window-layer', n)) a.windowLayer = parseIntIn(xml, vs, ve);
        return;
      case 13:
        if (c0 === 100 && xml.startsWith('drawing-order', n))
          a.drawingOrder = parseIntIn(xml, vs, ve) ?? NO_ORDER;
        else if (c0 === 119 && xml.startsWith('window-active', n)) a.windowActive = this.#bool(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-bounds', n)) a.windowBounds = parseBounds(xml, vs, ve);
        return;
      case 14:
        if (c0 === 108 && xml.startsWith('long-clickable', n)) a.longClickable = this.#bool(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-focused', n)) a.windowFocused = this.#bool(vs, ve);
        return;
      case 15:
        if (c0 === 118 && xml.startsWith('visible-to-user', n)) a.visible = this.#bool(vs, ve);
        return;
      case 18:
        if (c0 === 99 && xml.startsWith('can-scroll-forward', n)) a.canScrollForward = this.#bool(vs, ve);
        return;
      case 19:
        if (c0 === 99 && xml.startsWith('can-scroll-backward', n)) a.canScrollBackward = this.#bool(vs, ve);
        return;
      default:
      // An attribute we do not keep (vendor extras such as `xpos`).
    }
  }
}
