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

let loading: Promise<{ script: Asset; style: Asset }> | undefined;

/** The console's script and stylesheet, read (or bundled) once per process. */
export function consoleAssets(): Promise<{ script: Asset; style: Asset }> {
  loading ??= (async () => ({
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
