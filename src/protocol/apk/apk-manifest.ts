/**
 * Binary AndroidManifest.xml -> the few facts the bridge needs (pure).
 *
 * Decoding is done by @devicefarmer/adbkit-apkreader's BinaryXmlParser (CommonJS, untyped, loaded
 * through createRequire). That parser trusts its input: a chunk of size 0 makes it loop forever and
 * crafted string pools or attribute counts make it do unbounded work. So `guardBinaryXml` first
 * walks the same chunk structure the parser will walk and rejects anything that would not make
 * progress or would exceed a fixed budget; every error the parser still throws is mapped to
 * `BridgeError('INVALID_ARGUMENT', 'not a valid APK: ...')`.
 */
import { createRequire } from 'node:module';
import { invalidApk } from './apk-zip.ts';

const ANDROID_NS = 'http://schemas.android.com/apk/res/android';

const CHUNK_XML = 0x0003;
const CHUNK_STRING_POOL = 0x0001;
const CHUNK_START_ELEMENT = 0x0102;
const STRING_POOL_UTF8 = 1 << 8;
/** Total bytes the parser may decode from string pools (overlapping strings are legal but costly). */
const STRING_BUDGET = 16 << 20;

interface XmlTypedValue {
  value: unknown;
  type: unknown;
}

interface XmlAttribute {
  namespaceURI: unknown;
  name: unknown;
  value: unknown;
  typedValue: XmlTypedValue | null;
}

interface XmlNode {
  nodeName: unknown;
  attributes?: XmlAttribute[];
  childNodes?: XmlNode[];
}

type BinaryXmlParserCtor = new (buffer: Buffer) => { parse(): XmlNode | null };

const require = createRequire(import.meta.url);
const BinaryXmlParser =
  require('@devicefarmer/adbkit-apkreader/lib/apkreader/parser/binaryxml.js') as BinaryXmlParserCtor;

export interface ManifestInfo {
  packageName: string;
  versionCode: number;
  versionName: string | null;
  minSdk: number | null;
  targetSdk: number | null;
  testOnly: boolean;
  debuggable: boolean;
  /** Fully qualified class names (`.Foo` resolved against the package). */
  instrumentations: Array<{ name: string; targetPackage: string }>;
  /**
   * `<service>`s of the application: fully qualified class name and the permission a caller must
   * hold (`android.permission.BIND_ACCESSIBILITY_SERVICE` for an accessibility service), or null.
   */
  services: Array<{ name: string; permission: string | null }>;
  /**
   * `<activity>`s of the application: fully qualified class name and whether other apps (and the
   * shell's `am start -n`) may start it (`android:exported`; absent counts as not exported).
   */
  activities: Array<{ name: string; exported: boolean }>;
}

/** Mirrors BinaryXmlParser.parse()'s walk; throws unless the parser is guaranteed to terminate cheaply. */
export function guardBinaryXml(xml: Uint8Array): void {
  const dv = new DataView(xml.buffer, xml.byteOffset, xml.byteLength);
  if (xml.length < 8 || dv.getUint16(0, true) !== CHUNK_XML)
    throw invalidApk('AndroidManifest.xml is not binary XML');
  let budget = STRING_BUDGET;
  let pos = 8; // the parser reads the 8-byte XML header, then chunks until the end of the buffer
  while (pos < xml.length) {
    if (pos + 8 > xml.length) throw invalidApk('AndroidManifest.xml: truncated chunk header');
    const type = dv.getUint16(pos, true);
    const size = dv.getUint32(pos + 4, true);
    if (size < 8 || pos + size > xml.length) throw invalidApk('AndroidManifest.xml: bad chunk size');
    const end = pos + size;
    if (type === CHUNK_STRING_POOL) {
      if (pos + 28 > end) throw invalidApk('AndroidManifest.xml: truncated string pool');
      const count = dv.getUint32(pos + 8, true);
      const utf8 = (dv.getUint32(pos + 16, true) & STRING_POOL_UTF8) !== 0;
      const stringsStart = pos + dv.getUint32(pos + 20, true);
      if (count > (size - 28) / 4)
        throw invalidApk('AndroidManifest.xml: string pool too small for its count');
      for (let i = 0; i < count; i++) {
        const at = stringsStart + dv.getUint32(pos + 28 + 4 * i, true);
        const extent = utf8 ? utf8Extent(dv, at, end) : utf16Extent(dv, at, end);
        budget -= extent;
        if (budget < 0) throw invalidApk('AndroidManifest.xml: string pool too large');
      }
    } else if (type === CHUNK_START_ELEMENT) {
      if (pos + 36 > end) throw invalidApk('AndroidManifest.xml: truncated element');
      const attributeCount = dv.getUint16(pos + 28, true);
      if (36 + attributeCount * 20 > size)
        throw invalidApk('AndroidManifest.xml: element too small for its attributes');
    }
    pos = end;
  }
}

function utf8Extent(dv: DataView, at: number, end: number): number {
  let p = at;
  for (let i = 0; i < 2; i++) {
    // two lengths (chars, then bytes), each 1 or 2 bytes
    if (p + 1 > end) throw invalidApk('AndroidManifest.xml: string outside its pool');
    const first = dv.getUint8(p);
    if (first & 0x80) {
      if (p + 2 > end) throw invalidApk('AndroidManifest.xml: string outside its pool');
      if (i === 1) p += ((first & 0x7f) << 8) + dv.getUint8(p + 1);
      p += 2;
    } else {
      if (i === 1) p += first;
      p += 1;
    }
  }
  if (p + 1 > end) throw invalidApk('AndroidManifest.xml: string outside its pool');
  return p + 1 - at;
}

function utf16Extent(dv: DataView, at: number, end: number): number {
  if (at + 2 > end) throw invalidApk('AndroidManifest.xml: string outside its pool');
  let chars = dv.getUint16(at, true);
  let p = at + 2;
  if (chars & 0x8000) {
    if (at + 4 > end) throw invalidApk('AndroidManifest.xml: string outside its pool');
    chars = ((chars & 0x7fff) << 16) + dv.getUint16(at + 2, true);
    p += 2;
  }
  p += chars * 2 + 2;
  if (p > end) throw invalidApk('AndroidManifest.xml: string outside its pool');
  return p - at;
}

function attribute(node: XmlNode, name: string, namespace: string | null): XmlAttribute | undefined {
  if (!Array.isArray(node.attributes)) return undefined;
  return node.attributes.find(
    (attr) =>
      attr !== null &&
      typeof attr === 'object' &&
      attr.name === name &&
      (attr.namespaceURI ?? null) === namespace,
  );
}

function stringValue(attr: XmlAttribute | undefined): string | null {
  if (attr === undefined) return null;
  if (typeof attr.value === 'string') return attr.value;
  const typed = attr.typedValue;
  if (typed?.type === 'string' && typeof typed.value === 'string') return typed.value;
  return null;
}

function intValue(attr: XmlAttribute | undefined): number | null {
  if (attr === undefined) return null;
  const typed = attr.typedValue;
  if ((typed?.type === 'int_dec' || typed?.type === 'int_hex') && typeof typed.value === 'number')
    return typed.value;
  const text = stringValue(attr);
  if (text !== null && /^\d{1,9}$/.test(text)) return Number(text);
  return null;
}

function boolValue(attr: XmlAttribute | undefined): boolean {
  return attr?.typedValue?.type === 'boolean' && attr.typedValue.value === true;
}

function childElements(node: XmlNode, name: string): XmlNode[] {
  if (!Array.isArray(node.childNodes)) return [];
  return node.childNodes.filter(
    (child) => child !== null && typeof child === 'object' && child.nodeName === name,
  );
}

const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
const CLASS_NAME = /^[\p{L}_$][\p{L}\p{N}_$]*(\.[\p{L}_$][\p{L}\p{N}_$]*)*$/u;

/** `.Foo` -> `pkg.Foo`, `Foo` -> `pkg.Foo`, `a.b.Foo` unchanged (Android's PackageParser rules). */
export function resolveClassName(packageName: string, name: string): string {
  if (name.startsWith('.')) return packageName + name;
  if (!name.includes('.')) return `${packageName}.${name}`;
  return name;
}

function decode(xml: Uint8Array): XmlNode {
  guardBinaryXml(xml);
  let root: XmlNode | null;
  try {
    root = new BinaryXmlParser(Buffer.from(xml.buffer, xml.byteOffset, xml.byteLength)).parse();
  } catch (error) {
    throw invalidApk(`malformed AndroidManifest.xml: ${(error as Error)?.message ?? String(error)}`, error);
  }
  if (root === null || typeof root !== 'object') throw invalidApk('AndroidManifest.xml has no root element');
  return root;
}

export function parseBinaryManifest(xml: Uint8Array): ManifestInfo {
  const root = decode(xml);
  if (root.nodeName !== 'manifest') throw invalidApk('AndroidManifest.xml root element is not <manifest>');

  const packageName = stringValue(attribute(root, 'package', null));
  if (packageName === null || !PACKAGE_NAME.test(packageName)) {
    throw invalidApk(`AndroidManifest.xml has no valid package name (${JSON.stringify(packageName)})`);
  }
  const versionCodeAttr = attribute(root, 'versionCode', ANDROID_NS);
  const versionCode = versionCodeAttr === undefined ? 0 : intValue(versionCodeAttr);
  if (versionCode === null) throw invalidApk('AndroidManifest.xml versionCode is not an integer');

  const usesSdk = childElements(root, 'uses-sdk')[0];
  const application = childElements(root, 'application')[0];

  const instrumentations = childElements(root, 'instrumentation').map((element) => {
    const rawName = stringValue(attribute(element, 'name', ANDROID_NS));
    const name = rawName === null ? null : resolveClassName(packageName, rawName);
    if (name === null || !CLASS_NAME.test(name)) {
      throw invalidApk(`<instrumentation> has no valid class name (${JSON.stringify(rawName)})`);
    }
    const targetPackage = stringValue(attribute(element, 'targetPackage', ANDROID_NS));
    if (targetPackage === null || !PACKAGE_NAME.test(targetPackage)) {
      throw invalidApk(`<instrumentation ${name}> has no valid targetPackage`);
    }
    return { name, targetPackage };
  });

  const services = (application === undefined ? [] : childElements(application, 'service')).map((element) => {
    const rawName = stringValue(attribute(element, 'name', ANDROID_NS));
    const name = rawName === null ? null : resolveClassName(packageName, rawName);
    if (name === null || !CLASS_NAME.test(name)) {
      throw invalidApk(`<service> has no valid class name (${JSON.stringify(rawName)})`);
    }
    return { name, permission: stringValue(attribute(element, 'permission', ANDROID_NS)) };
  });

  const activities = (application === undefined ? [] : childElements(application, 'activity')).map(
    (element) => {
      const rawName = stringValue(attribute(element, 'name', ANDROID_NS));
      const name = rawName === null ? null : resolveClassName(packageName, rawName);
      if (name === null || !CLASS_NAME.test(name)) {
        throw invalidApk(`<activity> has no valid class name (${JSON.stringify(rawName)})`);
      }
      return { name, exported: boolValue(attribute(element, 'exported', ANDROID_NS)) };
    },
  );

  return {
    packageName,
    // Unsigned, as PackageInfo.getLongVersionCode() reports it (versionCodeMajor is not supported).
    versionCode: versionCode >>> 0,
    versionName: stringValue(attribute(root, 'versionName', ANDROID_NS)),
    minSdk: usesSdk === undefined ? null : intValue(attribute(usesSdk, 'minSdkVersion', ANDROID_NS)),
    targetSdk: usesSdk === undefined ? null : intValue(attribute(usesSdk, 'targetSdkVersion', ANDROID_NS)),
    testOnly: application !== undefined && boolValue(attribute(application, 'testOnly', ANDROID_NS)),
    debuggable: application !== undefined && boolValue(attribute(application, 'debuggable', ANDROID_NS)),
    instrumentations,
    services,
    activities,
  };
}
