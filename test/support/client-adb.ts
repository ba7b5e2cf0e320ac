/**
 * A client's own `adb`: a second, real adb server on its own port, with a freshly generated key
 * (`adb keygen` into a temp HOME, also named by ADB_VENDOR_KEYS), as a farm user's machine has.
 * `close()` kills that server and removes the temp dir. `sameKeyAs`: a second machine of the same
 * user (a copy of that client's key pair instead of a fresh one).
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from './bridge.ts';
import { type CliResult, runProcess } from './cli.ts';
import { freePort } from './device-bed.ts';

export interface ClientAdb {
  port: number;
  home: string;
  /** The text of the client's `adbkey.pub`. */
  publicKey: string;
  publicKeyFile: string;
  /** Run `adb -P PORT ARGS…` with this client's HOME and key (bounded). */
  adb(args: string[], timeoutMs?: number): Promise<CliResult>;
  close(): Promise<void>;
}

export async function startClientAdb(options: { sameKeyAs?: ClientAdb } = {}): Promise<ClientAdb> {
  const tmp = await tempDir('devicebridge-client-adb-');
  const home = tmp.dir;
  const keyFile = path.join(home, '.android', 'adbkey');
  const env = {
    HOME: home,
    ANDROID_SDK_HOME: home,
    ADB_VENDOR_KEYS: keyFile,
    // Keep the client's server from scanning for local emulators and mDNS services.
    ADB_MDNS: '0',
    ADB_LOCAL_TRANSPORT_MAX_PORT: '5555',
  };
  await mkdir(path.dirname(keyFile), { recursive: true });
  if (options.sameKeyAs !== undefined) {
    const from = options.sameKeyAs.publicKeyFile.replace(/\.pub$/, '');
    await copyFile(from, keyFile);
    await copyFile(`${from}.pub`, `${keyFile}.pub`);
  } else {
    const gen = await runProcess('adb', ['keygen', keyFile], { env, timeoutMs: 30_000 });
    if (gen.code !== 0) throw new Error(`adb keygen failed: ${gen.stderr}`);
  }
  const port = await freePort();
  const adb = (args: string[], timeoutMs = 20_000) =>
    runProcess('adb', ['-P', String(port), ...args], { env, timeoutMs });
  const started = await adb(['start-server']);
  if (started.code !== 0) throw new Error(`client adb server did not start: ${started.stderr}`);
  return {
    port,
    home,
    publicKey: await readFile(`${keyFile}.pub`, 'utf8'),
    publicKeyFile: `${keyFile}.pub`,
    adb,
    async close() {
      await adb(['kill-server'], 10_000).catch(() => undefined);
      await tmp.cleanup();
    },
  };
}
