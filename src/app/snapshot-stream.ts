/**
 * Large snapshot answers written as a stream: the bytes of `JSON.stringify(view)` — exactly — in
 * ~64 KiB UTF-8 pieces made as the HTTP response pulls them, instead of one string of the whole
 * answer plus its UTF-8 copy (for a 20,000-node dump: ~8 MB of XML, a ~11 MB JSON string, twice
 * that as UTF-16 when the dump has non-Latin text). The tree is walked with an explicit stack; each
 * node is serialized by `JSON.stringify` itself with its children held back, so escaping and number
 * formatting are V8's own. Pure (no I/O): the route hands the stream to the response.
 */
import type { SnapshotNode } from '../snapshot/types.ts';
import type { SnapshotJsonView, SnapshotView, SnapshotXmlView } from './helper-views.ts';

/** Answers whose XML is at least this many characters are streamed (smaller ones: one string). */
export const STREAM_SNAPSHOT_CHARS = 256 * 1024;
/** The threshold in force (benches set it to compare against the one-string answer). */
export const snapshotStreaming = { thresholdChars: STREAM_SNAPSHOT_CHARS };
/** Characters of JSON per piece (UTF-8 encoded when the piece is handed out). */
const PIECE_CHARS = 64 * 1024;
const NO_CHILDREN: SnapshotNode[] = [];
const CHILDREN_TAIL = '"children":[]}';

/** The XML a view carries (its size decides streaming). */
function xmlOf(view: SnapshotView): string {
  return view.format === 'xml' ? view.xml : view.snapshot.raw;
}

/** A stream of the view's JSON when it is large enough to stream, else null. */
export function streamedSnapshotView(
  view: SnapshotView,
  threshold = snapshotStreaming.thresholdChars,
): ReadableStream<Uint8Array> | null {
  const xml = xmlOf(view);
  if (typeof xml !== 'string' || xml.length < threshold) return null;
  return piecesToStream(snapshotViewJson(view));
}

/** `JSON.stringify(view)` as a sequence of string fragments (joined, byte-identical). */
export function* snapshotViewJson(view: SnapshotView): Generator<string> {
  const last = view.format === 'xml' ? 'xml' : 'snapshot';
  const head: Record<string, unknown> = {};
  for (const key of Object.keys(view)) if (key !== last) head[key] = (view as Record<string, unknown>)[key];
  const headJson = JSON.stringify(head);
  yield headJson.length > 2 ? `${headJson.slice(0, -1)},"${last}":` : `{"${last}":`;
  if (view.format === 'xml') yield* xmlString((view as SnapshotXmlView).xml);
  else yield* snapshotJson((view as SnapshotJsonView).snapshot);
  yield '}';
}

/** A JSON string literal of `text`, in slices that never split a surrogate pair. */
function* xmlString(text: string): Generator<string> {
  yield '"';
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + PIECE_CHARS, text.length);
    const c = text.charCodeAt(end - 1);
    if (end < text.length && c >= 0xd800 && c <= 0xdbff) end--;
    const quoted = JSON.stringify(text.slice(start, end));
    yield quoted.slice(1, -1);
    start = end;
  }
  yield '"';
}

function* snapshotJson(snapshot: SnapshotJsonView['snapshot']): Generator<string> {
  const head: Record<string, unknown> = {};
  for (const key of Object.keys(snapshot)) {
    if (key !== 'windows') head[key] = (snapshot as unknown as Record<string, unknown>)[key];
  }
  if (Object.keys(snapshot).at(-1) !== 'windows') {
    // Not the shape this writer knows: one string, still right.
    yield JSON.stringify(snapshot);
    return;
  }
  const headJson = JSON.stringify(head);
  yield headJson.length > 2 ? `${headJson.slice(0, -1)},"windows":` : '{"windows":';
  yield* nodeList(snapshot.windows);
  yield '}';
}

/** `JSON.stringify(nodes)` of a node list, node by node (iterative: any depth). */
function* nodeList(nodes: SnapshotNode[]): Generator<string> {
  const stack: Array<{ nodes: SnapshotNode[]; next: number }> = [{ nodes, next: 0 }];
  yield '[';
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { nodes: SnapshotNode[]; next: number };
    if (top.next === top.nodes.length) {
      stack.pop();
      // Close this list, and the node it belongs to (the root list has none).
      yield stack.length > 0 ? ']}' : ']';
      continue;
    }
    const node = top.nodes[top.next++] as SnapshotNode;
    const head = (top.next > 1 ? ',' : '') + nodeHead(node);
    if (head.endsWith(CHILDREN_TAIL)) {
      // `…"children":[` — the children follow, then `]}`.
      if (node.children.length === 0) yield head;
      else {
        yield head.slice(0, -2);
        stack.push({ nodes: node.children, next: 0 });
      }
    } else {
      // Children are not the last key: serialize this subtree whole.
      yield (top.next > 1 ? ',' : '') + JSON.stringify(node);
    }
  }
}

/** The node's JSON with an empty children list (its children are written after it). */
function nodeHead(node: SnapshotNode): string {
  const children = node.children;
  if (children.length === 0) return JSON.stringify(node);
  node.children = NO_CHILDREN;
  try {
    return JSON.stringify(node);
  } finally {
    node.children = children;
  }
}

/** Fragments → ~64 KiB UTF-8 pieces, each made when the consumer pulls. */
export function piecesToStream(fragments: Iterator<string>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const parts: string[] = [];
        let chars = 0;
        while (chars < PIECE_CHARS) {
          const next = fragments.next();
          if (next.done) break;
          parts.push(next.value);
          chars += next.value.length;
        }
        if (parts.length > 0) controller.enqueue(Buffer.from(parts.join(''), 'utf8'));
        if (chars < PIECE_CHARS) controller.close();
      },
      cancel() {
        fragments.return?.(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}
