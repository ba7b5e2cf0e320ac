/**
 * Type-level contract of `devicebridge/client`: checked by `tsc` (the project's typecheck and the
 * `client-types` unit test). A regression of the snapshot overloads or of a response type breaks
 * the build here: an assertion fails, or an `@ts-expect-error` below stops being an error.
 */
import { expectTypeOf } from 'vitest';
import type {
  A11yTreeNormalized,
  A11yTreeRaw,
  DeviceBridgeClient,
  GestureResponse,
  Lease,
  ReleaseLeaseResponse,
  SnapshotJsonResponse,
  SnapshotResponse,
  SnapshotXmlResponse,
  ViewportResponse,
} from '../../src/client/index.ts';

declare const client: DeviceBridgeClient;
declare const format: 'json' | 'xml';

// snapshot(): the JSON type by default and for format 'json', the XML type for 'xml', the union otherwise.
expectTypeOf(client.snapshot('l')).resolves.toEqualTypeOf<SnapshotJsonResponse>();
expectTypeOf(client.snapshot('l', {})).resolves.toEqualTypeOf<SnapshotJsonResponse>();
expectTypeOf(client.snapshot('l', { format: 'json' })).resolves.toEqualTypeOf<SnapshotJsonResponse>();
expectTypeOf(client.snapshot('l', { format: 'xml' })).resolves.toEqualTypeOf<SnapshotXmlResponse>();
expectTypeOf(
  client.snapshot('l', { format: 'xml', transport: 'one-shot', maxNodes: 10 }),
).resolves.toEqualTypeOf<SnapshotXmlResponse>();
expectTypeOf(client.snapshot('l', { format })).resolves.toEqualTypeOf<SnapshotResponse>();

// Without narrowing by hand: the fields of each variant are there, and only there.
export async function fields(): Promise<void> {
  const xml = await client.snapshot('l', { format: 'xml' });
  expectTypeOf(xml.xml).toEqualTypeOf<string>();
  expectTypeOf(xml.format).toEqualTypeOf<'xml'>();
  const json = await client.snapshot('l');
  expectTypeOf(json.snapshot.windows[0]!.children[0]!.bounds).toEqualTypeOf<{
    x: number;
    y: number;
    width: number;
    height: number;
  } | null>();
  expectTypeOf(json.format).toEqualTypeOf<'json'>();
  // @ts-expect-error: a JSON answer has no xml
  json.xml;
  // @ts-expect-error: an XML answer has no snapshot tree
  xml.snapshot;
  // @ts-expect-error: format is json or xml
  await client.snapshot('l', { format: 'html' });
}

// The other lease-scoped answers are the contract's types.
expectTypeOf(client.viewport('l')).resolves.toEqualTypeOf<ViewportResponse>();
expectTypeOf(client.gesture('l', { kind: 'tap', x: 1, y: 2 })).resolves.toEqualTypeOf<GestureResponse>();
expectTypeOf(client.releaseLease('l')).resolves.toEqualTypeOf<ReleaseLeaseResponse>();
expectTypeOf(client.acquireLease({ selector: { sdkMin: 30 } })).resolves.toEqualTypeOf<Lease>();
expectTypeOf<NonNullable<ReleaseLeaseResponse['teardown']>['failures']>().toEqualTypeOf<string[]>();
expectTypeOf<ReleaseLeaseResponse['teardownPending']>().toEqualTypeOf<
  { waitedMs: number; records: '/v1/teardowns' } | undefined
>();
expectTypeOf<GestureResponse['attempts'][number]['transport']>().toEqualTypeOf<'session' | 'one-shot'>();
// @ts-expect-error: a gesture needs its kind's fields
client.gesture('l', { kind: 'tap', x: 1 });

// a11yTree(): the normalized tree by default and for format 'normalized', the raw one for 'raw'.
export async function glass(): Promise<void> {
  expectTypeOf(client.a11yTree('l')).resolves.toEqualTypeOf<A11yTreeNormalized>();
  expectTypeOf(client.a11yTree('l', { format: 'normalized' })).resolves.toEqualTypeOf<A11yTreeNormalized>();
  expectTypeOf(client.a11yTree('l', { format: 'raw', package: 'p' })).resolves.toEqualTypeOf<A11yTreeRaw>();
  const tree = await client.a11yTree('l');
  expectTypeOf(tree.root.children[0]!.ref).toEqualTypeOf<string>();
  expectTypeOf(tree.package).toEqualTypeOf<string | null>();
  // @ts-expect-error: a normalized tree has no raw tree
  tree.tree;
  expectTypeOf(client.clipboard('l')).resolves.toEqualTypeOf<{ text: string }>();
  // @ts-expect-error: an action is set_text or click
  await client.a11yAction('l', { ref: 'e1', action: 'tap' });
}
