/**
 * Summarise a `node --cpu-prof` profile (`node --import tsx test/bench/profile-summary.ts FILE [TOP] [FROM_MS]`):
 * the functions with the most self time, and self time per source area (src/<dir>, node internals,
 * dependencies, GC, idle), as percentages of the non-idle samples. The load bench writes such profiles
 * of the serve process with BENCH_LOAD_PROFILE_DIR=DIR.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: `src/<dir>`, `node_modules/<pkg>`, `node:internal`, or a V8 pseudo-frame. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const src = /\/src\/([^/]+)(?:\/([^/]+))?/.exec(url);
  if (src && !url.includes('node_modules'))
    return `src/${src[1]}${src[2]?.endsWith('.ts') ? '' : `/${src[2] ?? ''}`}`;
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (mod) return `dep:${mod[1]}`;
  if (url.startsWith('node:')) return 'node-internal';
  return url;
}

/** `fromMs`: leave out the samples of the first milliseconds (the process's start: module loading). */
export function summarise(profile: Profile, top = 30, fromMs = 0): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    at += profile.timeDeltas[i] ?? 0;
    if (at < fromMs * 1000) continue;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)' || f.functionName === '(program)') continue;
    busy += us;
    const short = f.url.replace(/^.*\/(src|node_modules)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${short}:${f.lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    const area = areaOf(f.url, f.functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  // Each sample charged to the nearest frame of our own code up its stack (what caused the work).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ours = new Map<string, number>();
  for (const [id, us] of self) {
    const f0 = byId.get(id)!.callFrame;
    if (f0.functionName === '(idle)' || f0.functionName === '(program)') continue;
    let at: number | undefined = id;
    let key = '(no src frame)';
    while (at !== undefined) {
      const f = byId.get(at)!.callFrame;
      if (f.url.includes('/src/') && !f.url.includes('node_modules')) {
        key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/src\//, 'src/')}`;
        break;
      }
      at = parent.get(at);
    }
    ours.set(key, (ours.get(key) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
  const lines = [`busy: ${(busy / 1000).toFixed(0)} ms of samples`, '', 'self time by area:'];
  for (const [k, v] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`${pct(v)}  ${k}`);
  lines.push('', `top ${top} functions by self time:`);
  for (const [k, v] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(v)}  ${k}`);
  lines.push('', `top ${top} of our functions, charged with the work below them up to the next of ours:`);
  for (const [k, v] of [...ours].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(v)}  ${k}`);
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: profile-summary.ts FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const fromMs = Number(process.argv[4] ?? 0);
  process.stdout.write(`${summarise(profile, Number(process.argv[3] ?? 30), fromMs)}\n`);
}
