/**
 * The published package, as a user gets it: `npm run build`, `npm pack`, the tarball installed into a
 * fresh project (`npm install --prefer-offline`: the npm cache serves it when warm, else the
 * registry), then from that project only — plain Node, no tsx, no sources:
 * `npx devicebridge --help`; a client script type-checked by tsc under a standard NodeNext tsconfig
 * (strict, no allowImportingTsExtensions) against `devicebridge/client`'s declarations; and the same
 * script, compiled, driving a lease through a live `devicebridge serve --simulate 1` started from the
 * installed package with Redis leases (so the Lua scripts must have shipped next to the modules).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { type CliResult, type RunOptions, runProcess, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const TYPE_ROOTS = path.join(ROOT, 'node_modules/@types');
const redisUrl = 'redis://127.0.0.1:6379';
const prefix = `test:${randomUUID()}:`;

/** Every file under `dir`, relative, '/'-separated. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

async function run(command: string, args: string[], options: RunOptions = {}): Promise<CliResult> {
  const r = await runProcess(command, args, { timeoutMs: 120_000, ...options });
  if (r.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** Start a long-running command and wait for its first stdout line. */
function startFirstLine(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<{ child: ChildProcess; firstLine: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out waiting for ${args.join(' ')}: ${err}`));
    }, 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve({ child, firstLine: out.slice(0, nl) });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing: ${err}`));
    });
  });
}

const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    // What `tsc --init` writes. Our declarations are still checked where it matters: the
    // expect-error directive in the script fails the compile if `devicebridge/client`'s types degrade to `any`,
    // and the declaration test resolves every relative specifier of every shipped .d.ts.
    skipLibCheck: true,
    outDir: 'out',
    types: ['node'],
    typeRoots: [TYPE_ROOTS],
  },
  files: ['client.ts'],
};

const CLIENT_SCRIPT = `import { normalizeSnapshot } from 'devicebridge';
import { DeviceBridgeClient, type Lease } from 'devicebridge/client';

const tree = normalizeSnapshot('<hierarchy rotation="1"><node class="android.widget.Button" bounds="[0,0][9,9]"/></hierarchy>');

const client = new DeviceBridgeClient({ baseUrl: process.argv[2] });
const lease: Lease = await client.acquireLease({ selector: { labels: { simulated: 'true' } }, ttlSeconds: 60 });
// @${'ts-expect-error'} a lease id is a string: compiles only while the package's types resolve
const wrong: number = lease.id;
void wrong;
const devices = await client.listDevices();
const released = await client.releaseLease(lease.id);
process.stdout.write(
  JSON.stringify({
    deviceId: lease.deviceId,
    state: released.lease.state,
    devices: devices.devices.length,
    normalized: [tree.rotation, tree.windows[0]?.type],
  }) + '\\n',
);
`;

describe('the packed package installed into a fresh project (e2e)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let project: string;
  let packed: string[];
  let server: { child: ChildProcess; firstLine: string } | undefined;
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });

  beforeAll(async () => {
    tmp = await tempDir();
    project = path.join(tmp.dir, 'consumer');
    await run('npm', ['run', 'build'], { cwd: ROOT });
    const pack = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp.dir], {
      cwd: ROOT,
    });
    const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    packed = info!.files.map((f) => f.path);
    await mkdir(project);
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { devicebridge: `file:${path.join(tmp.dir, info!.filename)}` },
      }),
    );
    await run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: project,
    });
  }, 240_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await waitForExit(server.child).catch(() => server?.child.kill('SIGKILL'));
    }
    if (redis.status === 'ready') {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
    redis.disconnect();
    await tmp?.cleanup();
  }, 60_000);

  it('the build leaves dist/cli/bin.js executable (npx devicebridge after a rebuild)', () => {
    expect(statSync(path.join(ROOT, 'dist/cli/bin.js')).mode & 0o111).toBe(0o111);
  });

  it('ships dist/ (JavaScript, declarations, every Lua script of src/), LICENSE and no sources', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'package.json',
        'LICENSE',
        'README.md',
        'dist/cli/bin.js',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/client/index.js',
        'dist/client/index.d.ts',
        'dist/console/assets/console.js',
        'dist/console/assets/console.css',
      ]),
    );
    const lua = filesUnder(path.join(ROOT, 'src')).filter((f) => f.endsWith('.lua'));
    expect(lua.length).toBeGreaterThan(0);
    for (const f of lua) expect(packed).toContain(`dist/${f}`);
    expect(packed.filter((f) => /^(src|test|scripts|android|release)\//.test(f))).toEqual([]);
    expect(packed.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('npx devicebridge --help runs on plain Node: the installed project has no tsx', async () => {
    expect(existsSync(path.join(project, 'node_modules/devicebridge/dist/cli/bin.js'))).toBe(true);
    expect(existsSync(path.join(project, 'node_modules/tsx'))).toBe(false);
    const help = await run('npx', ['devicebridge', '--help'], { cwd: project });
    expect(help.stdout).toContain('Usage: devicebridge');
    expect(help.stdout).toContain('serve');
  });

  it('every relative specifier in the shipped declarations names a .js module whose .d.ts ships', () => {
    const dist = path.join(project, 'node_modules/devicebridge/dist');
    const declarations = filesUnder(dist).filter((f) => f.endsWith('.d.ts'));
    expect(declarations).toContain('client/index.d.ts');
    const specifier = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"\n]+)['"]/g;
    const broken: string[] = [];
    let checked = 0;
    for (const file of declarations) {
      const text = readFileSync(path.join(dist, file), 'utf8');
      for (const [, spec] of text.matchAll(specifier)) {
        checked++;
        const target = path.join(dist, path.dirname(file), spec!.replace(/\.js$/, '.d.ts'));
        if (!spec!.endsWith('.js') || !existsSync(target)) broken.push(`${file}: ${spec}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('a client script type-checks under NodeNext (strict, no allowImportingTsExtensions) and drives a live serve', async () => {
    await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify(CONSUMER_TSCONFIG, null, 2));
    await writeFile(path.join(project, 'client.ts'), CLIENT_SCRIPT);
    await run(process.execPath, [TSC, '-p', project], { cwd: project });

    await redis.connect();
    server = await startFirstLine(
      path.join(project, 'node_modules/.bin/devicebridge'),
      ['serve', '--port', '0', '--data-dir', path.join(project, 'var'), '--simulate', '1', '--json'],
      {
        cwd: project,
        env: {
          DEVICEBRIDGE_ADB_PORT: String(await freePort()),
          REDIS_URL: redisUrl,
          DEVICEBRIDGE_REDIS_PREFIX: prefix,
          LOG_LEVEL: 'silent',
        },
      },
    );
    const info = JSON.parse(server.firstLine) as { url: string; leases: string; devices: unknown[] };
    expect(info.leases).toBe('redis');
    expect(info.devices).toHaveLength(1);
    const out = await run(process.execPath, [path.join(project, 'out/client.js'), info.url], {
      cwd: project,
    });
    const result = JSON.parse(out.stdout) as { deviceId: string; state: string; devices: number };
    expect(result).toMatchObject({ state: 'released', devices: 1, normalized: [1, 'Button'] });
    expect(result.deviceId).toMatch(/^127\.0\.0\.1-\d+$/);
    expect((await redis.keys(`${prefix}*`)).length).toBeGreaterThan(0);
    // The console is served from the package (its bundled script, no esbuild installed), offline.
    expect(existsSync(path.join(project, 'node_modules/esbuild'))).toBe(false);
    const page = await fetch(`${info.url}/console/devices`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /src="(\/console\/assets\/console\.js\?v=[0-9a-f]+)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`${info.url}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(await js.text()).toContain('csrf-token');
  }, 120_000);
});
