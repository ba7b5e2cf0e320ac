import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsArtifactStore, openArtifactStore, sha256File } from '../../src/artifacts/index.ts';
import { BridgeError } from '../../src/errors.ts';

let dir: string;
let store: FsArtifactStore;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'artifacts-fs-'));
  store = new FsArtifactStore(path.join(dir, 'store'));
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Every file name under the store root, recursively (including temp files and sidecars). */
async function allFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.relative(root, path.join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

const sha = (b: string | Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('FsArtifactStore', () => {
  it('describes itself with an absolute file: spec', () => {
    expect(store.kind).toBe('fs');
    expect(store.description).toBe(`file:${path.join(dir, 'store')}`);
  });

  it('put/get/stat round-trip with a sha256 etag', async () => {
    const info = await store.put('helpers/x/latest.json', '{"v":1}', { contentType: 'application/json' });
    expect(info).toMatchObject({ key: 'helpers/x/latest.json', size: 7, etag: `"${sha('{"v":1}')}"` });
    expect((await store.get('helpers/x/latest.json'))?.toString()).toBe('{"v":1}');
    const st = await store.stat('helpers/x/latest.json');
    expect(st).toMatchObject({ size: 7, etag: info.etag, contentType: 'application/json' });
    expect(st?.lastModified).toBeInstanceOf(Date);
  });

  it('returns null for absent keys and for "directory" keys', async () => {
    await store.put('a/b', 'x');
    expect(await store.get('missing')).toBeNull();
    expect(await store.stat('a')).toBeNull();
    expect(await store.get('a')).toBeNull();
    expect(await store.openRead('nope')).toBeNull();
    expect(await store.get('a/b/c')).toBeNull();
  });

  it('overwrites with put and changes the etag', async () => {
    const first = await store.put('k', 'one');
    const second = await store.put('k', 'two!');
    expect(second.etag).not.toBe(first.etag);
    expect((await store.stat('k'))?.etag).toBe(second.etag);
    expect((await store.get('k'))?.toString()).toBe('two!');
  });

  it('recomputes a stale etag when the file changed behind its back', async () => {
    await store.put('k', 'one');
    await writeFile(store.pathFor('k'), 'changed externally');
    expect((await store.stat('k'))?.etag).toBe(`"${sha('changed externally')}"`);
  });

  it('lists recursively, sorted, by string prefix, hiding temp files and sidecars', async () => {
    for (const key of ['b/2', 'a/1', 'a/sub/3', 'ab/4', 'c']) await store.put(key, key);
    await writeFile(path.join(store.root, 'a', '.~tmp-deadbeef'), 'partial');
    expect(await store.list('')).toEqual(['a/1', 'a/sub/3', 'ab/4', 'b/2', 'c']);
    expect(await store.list('a/')).toEqual(['a/1', 'a/sub/3']);
    expect(await store.list('a')).toEqual(['a/1', 'a/sub/3', 'ab/4']);
    expect(await store.list('zzz/')).toEqual([]);
    await expect(store.list('../')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('openRead streams whole objects and inclusive ranges, clamping the end', async () => {
    const body = Buffer.from('0123456789');
    await store.put('r', body);
    const whole = await store.openRead('r');
    expect(whole?.range).toBeUndefined();
    expect((await readAll(whole!.stream)).toString()).toBe('0123456789');
    const part = await store.openRead('r', { start: 2, end: 5 });
    expect(part?.range).toEqual({ start: 2, end: 5 });
    expect(part?.info.size).toBe(10);
    expect((await readAll(part!.stream)).toString()).toBe('2345');
    const tail = await store.openRead('r', { start: 7, end: 1000 });
    expect(tail?.range).toEqual({ start: 7, end: 9 });
    expect((await readAll(tail!.stream)).toString()).toBe('789');
    await expect(store.openRead('r', { start: 10, end: 12 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { reason: 'RANGE_NOT_SATISFIABLE', size: 10 },
    });
  });

  it('putFile streams a file with progress and the same etag as its sha256', async () => {
    const src = path.join(dir, 'src.bin');
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    await writeFile(src, bytes);
    const seen: number[] = [];
    const info = await store.putFile('artifacts/big', src, { onProgress: (sent) => seen.push(sent) });
    expect(info.size).toBe(bytes.length);
    expect(info.etag).toBe(`"${(await sha256File(src)).sha256}"`);
    expect(seen.at(-1)).toBe(bytes.length);
    expect(seen.length).toBeGreaterThan(2);
    await expect(store.putFile('x', path.join(dir, 'missing'))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('putIfAbsent writes once and never overwrites', async () => {
    expect(await store.putIfAbsent('once', 'first')).toBe(true);
    expect(await store.putIfAbsent('once', 'second')).toBe(false);
    expect((await store.get('once'))?.toString()).toBe('first');
  });

  it('10 concurrent putIfAbsent: exactly one wins and its bytes are stored; no temp files left', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.putIfAbsent('helpers/h/versions/1.0.0/manifest.json', `body-${i}`),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await store.get('helpers/h/versions/1.0.0/manifest.json'))?.toString()).toBe(`body-${winner}`);
    const files = await allFiles(store.root);
    expect(files.filter((f) => f.includes('~tmp'))).toEqual([]);
  });

  it('concurrent puts of one key leave one complete body and no temp files', async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(64 * 1024, i));
    await Promise.all(bodies.map((b) => store.put('race', b)));
    const got = await store.get('race');
    expect(bodies.some((b) => b.equals(got!))).toBe(true);
    expect((await store.stat('race'))?.etag).toBe(`"${sha(got!)}"`);
    expect((await allFiles(store.root)).filter((f) => f.includes('~tmp'))).toEqual([]);
  });

  it('refuses a key that collides with an existing object path', async () => {
    await store.put('a', 'file');
    await expect(store.put('a/b', 'x')).rejects.toMatchObject({ code: 'CONFLICT' });
    await store.put('d/e', 'x');
    await expect(store.put('d', 'x')).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await allFiles(store.root)).filter((f) => f.includes('~tmp'))).toEqual([]);
  });

  it('delete removes the object, its sidecar and empty directories; absent is fine', async () => {
    await store.put('x/y/z', '1');
    await store.delete('x/y/z');
    await store.delete('x/y/z');
    expect(await store.get('x/y/z')).toBeNull();
    expect(await store.list('')).toEqual([]);
    expect(await allFiles(store.root)).toEqual([]);
    await expect(stat(path.join(store.root, 'x'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('rejects invalid keys before touching the disk and never escapes the root', async () => {
    for (const key of ['../escape', '/etc/passwd', 'a/../../b', 'a\\b']) {
      await expect(store.put(key, 'x')).rejects.toBeInstanceOf(BridgeError);
      await expect(store.get(key)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('list does not follow symlinks out of the root', async () => {
    await store.put('in', 'x');
    const outside = path.join(dir, 'outside');
    await writeFile(outside, 'secret');
    await symlink(outside, path.join(store.root, 'link'));
    expect(await store.list('')).toEqual(['in']);
  });

  it('downloadUrl is null: the bridge serves filesystem artifacts itself', async () => {
    expect(await store.downloadUrl('artifacts/x')).toBeNull();
  });

  it('openArtifactStore resolves relative file: specs against baseDir', async () => {
    const opened = openArtifactStore('file:rel/store', { baseDir: dir });
    expect(opened.kind).toBe('fs');
    expect(opened.description).toBe(`file:${path.join(dir, 'rel', 'store')}`);
    await opened.put('k', 'v');
    expect((await opened.get('k'))?.toString()).toBe('v');
    expect(() => openArtifactStore('ftp://x', {})).toThrow(/unknown scheme "ftp:"/);
  });
});
