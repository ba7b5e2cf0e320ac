/**
 * The console's static assets, served from the package: the stylesheet (copied to dist/ by the
 * build) and the client script, bundled from ./client/ by `npm run build` into
 * dist/console/assets/console.js. Running from src/ (tsx, the tests) there is no bundle: it is built
 * once, in memory, with esbuild (a devDependency) on first use.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: string;
  /** sha256 prefix of the body: the ETag and the `?v=` of the asset's URL. */
  hash: string;
  type: string;
}

const asset = (body: string, type: string): Asset => ({
  body,
  type,
  hash: createHash('sha256').update(body).digest('hex').slice(0, 16),
});

async function script(): Promise<string> {
  try {
    return await readFile(new URL('./assets/console.js', import.meta.url), 'utf8');
  } catch {
    const esbuild = await import('esbuild');
    const built = await esbuild.build({
      entryPoints: [fileURLToPath(new URL('./client/main.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'iife',
      target: 'es2020',
      minify: true,
      logLevel: 'silent',
    });
    return built.outputFiles[0]?.text ?? '';
  }
}

/** The console's icon: a phone outline (browsers ask for one; without it every page load logged a 404). */
const ICON = asset(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="8" y="2" width="16" height="28" rx="3" fill="#1f6feb"/><rect x="10" y="5" width="12" height="20" fill="#fff"/><circle cx="16" cy="27.5" r="1.2" fill="#fff"/></svg>',
  'image/svg+xml',
);

let loading: Promise<{ script: Asset; style: Asset; icon: Asset }> | undefined;

/** The console's script, stylesheet and icon, read (or bundled) once per process. */
export function consoleAssets(): Promise<{ script: Asset; style: Asset; icon: Asset }> {
  loading ??= (async () => ({
    icon: ICON,
    script: asset(await script(), 'text/javascript; charset=utf-8'),
    style: asset(
      await readFile(new URL('./assets/console.css', import.meta.url), 'utf8'),
      'text/css; charset=utf-8',
    ),
  }))();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
