/**
 * The user documentation's links hold: every relative link of README.md, docs/*.md, SECURITY.md and
 * the android/ READMEs names a file that exists, and an anchor a heading of that file makes (GitHub's
 * slugs). Moving a section between pages must move its links too.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PAGES = [
  'README.md',
  'SECURITY.md',
  'android/README.md',
  'android/framework-fakes/README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#+ (.*)$/.exec(line);
    if (heading) anchors.add(slug(heading[1]!));
  }
  return anchors;
}

describe('documentation links', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('HTTP API (v1)')).toBe('http-api-v1');
    expect(slug('Several nodes: identity, teardown on the owner, ghosts, takeover')).toBe(
      'several-nodes-identity-teardown-on-the-owner-ghosts-takeover',
    );
    expect(slug('Map: where each capability lives')).toBe('map-where-each-capability-lives');
  });

  for (const page of PAGES) {
    it(`${page}: every relative link names a file and a heading that exist`, () => {
      const file = path.join(ROOT, page);
      // A code span is not a link, whatever it holds (`[a-z](?:…)` in a pattern).
      const text = readFileSync(file, 'utf8').replace(/`[^`\n]*`/g, '');
      const broken: string[] = [];
      for (const match of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [where = '', anchor] = target.split('#');
        const resolved = where === '' ? file : path.resolve(path.dirname(file), where);
        if (!existsSync(resolved)) broken.push(`${target}: no such file`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${target}: no such heading`);
      }
      expect(broken).toEqual([]);
    });
  }
});
