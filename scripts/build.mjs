#!/usr/bin/env node
/**
 * `npm run build`: the publishable package in dist/ (JavaScript + .d.ts, plain Node 22+, no tsx).
 *
 * 1. Empties dist/ and compiles src/ with tsconfig.build.json. Sources import each other with `.ts`
 *    extensions; `rewriteRelativeImportExtensions` turns those into `.js` in the emitted JavaScript.
 *    `--noCheck`: emit only, like esbuild-based builds; types are checked by `npm run typecheck`
 *    (the whole tree, tests included), and a second full check here would triple the build time.
 * 2. Rewrites the same specifiers in the emitted declarations: tsc leaves `./x.ts` in .d.ts files
 *    (microsoft/TypeScript#61037). TypeScript ≥ 5 resolves them, but older compilers and other tools
 *    do not, and a `.ts` file does not exist in dist/.
 * 3. Copies the files read at run time next to the modules that read them (through
 *    `new URL(…, import.meta.url)`): every `.lua` file under src/, at any depth, at the same relative
 *    path (and the console's stylesheet). A new asset type read at run time is added to ASSET_EXTENSIONS.
 * 4. Bundles the console's client script (src/console/client/main.ts, browser TypeScript; its own
 *    tsconfig) with esbuild into dist/console/assets/console.js: the package serves it, offline.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const ASSET_EXTENSIONS = ['.lua', '.css'];

/** Every file under `dir` (relative paths, '/' separated), recursively. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath ?? entry.path, entry.name)));
}

rmSync(dist, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const tscArgs = [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--noCheck'];
const compiled = spawnSync(process.execPath, tscArgs, { stdio: 'inherit' });
if (compiled.status !== 0) {
  process.stderr.write('build: tsc failed\n');
  process.exit(compiled.status ?? 1);
}

// `from './x.ts'`, `import('./x.ts')`, `import './x.ts'` with a relative specifier → `.js`.
const TS_SPECIFIER = /((?:\bfrom|\bimport)\s*\(?\s*)(['"])(\.{1,2}\/[^'"\n]*?)(?<!\.d)\.ts\2/g;
let rewritten = 0;
for (const file of filesUnder(dist)) {
  if (!file.endsWith('.d.ts')) continue;
  const full = path.join(dist, file);
  const text = readFileSync(full, 'utf8');
  const next = text.replace(TS_SPECIFIER, (_m, lead, quote, spec) => `${lead}${quote}${spec}.js${quote}`);
  if (next !== text) {
    writeFileSync(full, next);
    rewritten++;
  }
}

let copied = 0;
for (const file of filesUnder(src)) {
  if (!ASSET_EXTENSIONS.includes(path.extname(file))) continue;
  const target = path.join(dist, file);
  mkdirSync(path.dirname(target), { recursive: true });
  copyFileSync(path.join(src, file), target);
  copied++;
}
const esbuild = await import('esbuild');
await esbuild.build({
  entryPoints: [path.join(src, 'console/client/main.ts')],
  outfile: path.join(dist, 'console/assets/console.js'),
  bundle: true,
  format: 'iife',
  target: 'es2020',
  minify: true,
  logLevel: 'warning',
});
// `npx devicebridge` runs node_modules/.bin/devicebridge → dist/cli/bin.js: npm marks it executable
// at install, but a rebuild writes it anew (tsc gives it 0644), so mark it here too.
chmodSync(path.join(dist, 'cli/bin.js'), 0o755);
process.stdout.write(
  `build: dist/ ready (${rewritten} declaration files rewritten, ${copied} assets copied)\n`,
);
