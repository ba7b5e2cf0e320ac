/**
 * A module of the built bridge (`dist/`, what the installed `devicebridge` runs; `npm run bench`
 * builds first), typed as its source. Benchmarks time the built code: run through tsx (the
 * development path) our modules call each other's exports through getters, several times slower
 * on hot paths (normalize of the built-in screen 4.6–6.3 ms under tsx, 1.7 ms built).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export async function built<T>(module: string): Promise<T> {
  const url = pathToFileURL(path.resolve(import.meta.dirname, '../../dist', module)).href;
  return (await import(url).catch((err: Error) => {
    throw new Error(`dist/${module}: ${err.message} (run \`npm run build\` first; npm run bench does)`);
  })) as T;
}
