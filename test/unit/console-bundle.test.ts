/**
 * The console's browser script as the package builds it (esbuild, scripts/build.mjs and
 * src/console/assets.ts): it bundles for the browser (a module that reached a Node built-in would not
 * resolve there), and the live view reads the bridge's messages with the protocol's own parser, the
 * one the typed client uses, not a copy of its own.
 */
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function bundleInputs(): Promise<string[]> {
  const built = await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/console/client/main.ts'],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2020',
    platform: 'browser',
    metafile: true,
    logLevel: 'silent',
  });
  return Object.keys(built.metafile.inputs);
}

describe("the console's browser script", () => {
  it('bundles for the browser, with the viewer messages from src/protocol/screen/', async () => {
    const inputs = await bundleInputs();
    expect(inputs).toContain('src/console/client/live-screen.ts');
    expect(inputs).toContain('src/protocol/screen/viewer-messages.ts');
    // Nothing from node_modules: the script is the console's code and the bridge's pure modules.
    expect(inputs.filter((f) => !f.startsWith('src/'))).toEqual([]);
  });
});
