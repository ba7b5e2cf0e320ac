/**
 * Installs through the real adb server, whichever path adb takes (streamed `abb_exec:`/`exec:cmd`
 * or push + `pm install`), and adbkit (a host-protocol client) against the simulator.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { Adb } from '@devicefarmer/adbkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatedDevice, type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { type AdbServer, startAdbServer } from './support/adb-server.ts';

const APK_DIR = new URL('../fixtures/apk/', import.meta.url).pathname;
const apk = (name: string): string => `${APK_DIR}${name}`;
const HELPER = 'com.callstack.agentdevice.snapshothelper';
const FIXTURES = ['snapshot-helper-v1.apk', 'snapshot-helper-v2.apk', 'snapshot-helper-v2-keyb.apk'];
const missing = FIXTURES.filter((f) => !existsSync(apk(f)));

let sim: Simulator;
let server: AdbServer;
let device: SimulatedDevice;

async function adb(...args: string[]) {
  const result = await server.adb(['-s', device.serial, ...args]);
  return { code: result.code, out: result.stdout.toString() + result.stderr };
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, count: 1 });
  device = sim.devices[0]!;
  server = await startAdbServer();
  await server.connect(device.address);
});

afterAll(async () => {
  await server?.stop();
  await sim?.close();
});

describe.skipIf(missing.length > 0)(`adb install (fixtures missing: ${missing.join(', ') || 'none'})`, () => {
  it('streams an install (adb picks abb_exec) and pm lists the version', async () => {
    const argvs: string[][] = [];
    const runArgv = device.android.runArgv.bind(device.android);
    const spy: typeof runArgv = (argv, io, stdin) => {
      argvs.push(argv);
      return runArgv(argv, io, stdin);
    };
    Object.assign(device.android, { runArgv: spy });
    try {
      const install = await adb('install', '-r', '-t', apk('snapshot-helper-v1.apk'));
      expect(install.out).toContain('Success');
      expect(install.code).toBe(0);
    } finally {
      Object.assign(device.android, { runArgv });
    }
    const size = String((await readFile(apk('snapshot-helper-v1.apk'))).length);
    expect(argvs).toContainEqual(['cmd', 'package', 'install', '-r', '-t', '-S', size]);
    const list = await adb('shell', 'pm list packages --show-versioncode');
    expect(list.out).toContain(`package:${HELPER} versionCode:1\n`);
  });

  it('refuses a downgrade without -d and a different signer, with the Android codes', async () => {
    expect((await adb('install', '-r', '-t', apk('snapshot-helper-v2.apk'))).code).toBe(0);
    const downgrade = await adb('install', '-r', '-t', apk('snapshot-helper-v1.apk'));
    expect(downgrade.code).not.toBe(0);
    expect(downgrade.out).toContain('INSTALL_FAILED_VERSION_DOWNGRADE');
    const signer = await adb('install', '-r', '-t', apk('snapshot-helper-v2-keyb.apk'));
    expect(signer.code).not.toBe(0);
    expect(signer.out).toContain('INSTALL_FAILED_UPDATE_INCOMPATIBLE');
    expect((await adb('shell', `pm list packages --show-versioncode ${HELPER}`)).out).toContain(
      'versionCode:2',
    );
  });

  it('installs by push + pm install through the shell (the non-streamed path)', async () => {
    expect((await adb('uninstall', HELPER)).out).toContain('Success');
    expect((await adb('push', apk('snapshot-helper-v1.apk'), '/data/local/tmp/h.apk')).code).toBe(0);
    const pm = await adb('shell', 'pm install -r -t /data/local/tmp/h.apk');
    expect(pm.out).toContain('Success');
    expect((await adb('shell', `pm path ${HELPER}`)).out).toMatch(/^package:\/data\/app\/.*base\.apk$/m);
  });

  it('fails every install with the injected install-failure code', async () => {
    device.setFaults({ installFailure: 'INSTALL_FAILED_INSUFFICIENT_STORAGE' });
    try {
      const install = await adb('install', '-r', '-t', '-d', apk('snapshot-helper-v1.apk'));
      expect(install.code).not.toBe(0);
      expect(install.out).toContain('INSTALL_FAILED_INSUFFICIENT_STORAGE');
    } finally {
      device.setFaults({});
    }
  });
});

describe('adbkit against the simulator', () => {
  const client = () => Adb.createClient({ port: server.port });

  it('lists the device and runs a shell command (shell: v1)', async () => {
    const devices = await client().listDevices();
    expect(devices).toContainEqual(expect.objectContaining({ id: device.serial, type: 'device' }));
    const stream = await client().getDevice(device.serial).shell('echo via-adbkit; getprop ro.product.model');
    const out = (await Adb.util.readAll(stream)).toString();
    expect(out).toBe(`via-adbkit\n${device.android.device.getprop('ro.product.model')}\n`);
  });

  it('pushes, stats and pulls with sync', async () => {
    const data = randomBytes(1024 * 1024 + 3);
    const dev = client().getDevice(device.serial);
    const source = new PassThrough();
    source.end(data);
    const transfer = await dev.push(source, '/data/local/tmp/adbkit.bin', 0o644);
    await new Promise<void>((resolve, reject) => {
      transfer.on('end', resolve);
      transfer.on('error', reject);
    });
    const stat = await dev.stat('/data/local/tmp/adbkit.bin');
    expect(stat.size).toBe(data.length);
    expect(stat.isFile()).toBe(true);
    const pull = await dev.pull('/data/local/tmp/adbkit.bin');
    const back = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      pull.on('data', (c: Buffer) => chunks.push(c));
      pull.on('end', () => resolve(Buffer.concat(chunks)));
      pull.on('error', reject);
    });
    expect(createHash('sha256').update(back).digest('hex')).toBe(
      createHash('sha256').update(data).digest('hex'),
    );
    const entries = await dev.readdir('/data/local/tmp');
    expect(entries.map((e: { name: string }) => e.name)).toContain('adbkit.bin');
  });

  it.skipIf(missing.length > 0 || !existsSync(apk('plain-app.apk')))(
    'installs with push + pm install -r, and gets INSTALL_FAILED_TEST_ONLY for a test-only APK',
    async () => {
      const dev = client().getDevice(device.serial);
      await dev.uninstall(HELPER);
      // adbkit's install() runs `pm install -r` without -t: Android refuses the test-only helper.
      await expect(dev.install(apk('snapshot-helper-v2.apk'))).rejects.toThrow(/INSTALL_FAILED_TEST_ONLY/);
      expect(await dev.isInstalled(HELPER)).toBe(false);
      const info = JSON.parse(await readFile(`${APK_DIR}FIXTURES.json`, 'utf8')) as {
        fixtures: Array<{ file: string; packageName: string }>;
      };
      const pkg = info.fixtures.find((f) => f.file === 'plain-app.apk')!.packageName;
      expect(await dev.install(apk('plain-app.apk'))).toBe(true);
      expect(await dev.isInstalled(pkg)).toBe(true);
    },
  );
});

describe.skipIf(missing.length > 0)('adb install on devices with older feature sets', () => {
  const cases: Array<{ name: string; drop: string[] }> = [
    { name: 'cmd without abb_exec: exec:cmd package install -S', drop: ['abb_exec', 'abb'] },
    { name: 'neither cmd nor abb_exec: push + pm install', drop: ['abb_exec', 'abb', 'cmd'] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { DEVICE_FEATURES } = await import('../../src/simulator/index.ts');
      const old = await startSimulator({
        port: 0,
        features: DEVICE_FEATURES.filter((f) => !c.drop.includes(f)),
      });
      try {
        const dev = old.devices[0]!;
        const lines: string[] = [];
        const run = dev.android.run.bind(dev.android);
        Object.assign(dev.android, {
          run: ((line, io, stdin) => {
            lines.push(line);
            return run(line, io, stdin);
          }) satisfies typeof run,
        });
        await server.connect(dev.address);
        const install = await server.adb([
          '-s',
          dev.serial,
          'install',
          '-r',
          '-t',
          apk('snapshot-helper-v1.apk'),
        ]);
        expect(install.stdout.toString()).toContain('Success');
        expect(dev.android.device.findPackage(HELPER)?.versionCode).toBe(1);
        if (c.drop.includes('cmd')) expect(lines).toContainEqual(expect.stringMatching(/^pm 'install' /));
        else expect(lines.some((l) => /^cmd package 'install' '-r' '-t' -S \d+$/.test(l))).toBe(true);
        await server.adb(['disconnect', dev.address]);
      } finally {
        await old.close();
      }
    });
  }
});
