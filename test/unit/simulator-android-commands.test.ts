import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid } from '../../src/simulator/android/index.ts';

const sim = (props?: Record<string, string>) =>
  createSimAndroid({ serial: 'cmd-test-1', seed: 11, ...(props === undefined ? {} : { props }) });
const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../fixtures/apk/${name}`, import.meta.url)));

describe('getprop', () => {
  it('prints one property, the default or an empty line', async () => {
    const android = sim();
    expect(await runCaptured(android, 'getprop ro.build.version.sdk')).toMatchObject({
      status: 0,
      stdout: '34\n',
    });
    expect((await runCaptured(android, 'getprop ro.serialno')).stdout).toBe('cmd-test-1\n');
    expect((await runCaptured(android, 'getprop ro.product.cpu.abi')).stdout).toBe('x86_64\n');
    expect((await runCaptured(android, 'getprop no.such.prop')).stdout).toBe('\n');
    expect((await runCaptured(android, 'getprop no.such.prop fallback')).stdout).toBe('fallback\n');
  });

  it('lists every property as sorted [key]: [value] lines', async () => {
    const { stdout } = await runCaptured(sim(), 'getprop');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toContain('[ro.product.model]: [DeviceBridge Sim]');
    expect(lines).toContain('[ro.build.version.release]: [14]');
    expect(lines.every((l) => /^\[[^\]]+\]: \[.*\]$/.test(l))).toBe(true);
    const keys = lines.map((l) => l.slice(1, l.indexOf(']')));
    expect([...keys].sort()).toEqual(keys);
  });

  it('honours overrides and exposes them in the banner', async () => {
    const android = sim({ 'ro.build.version.sdk': '30', 'ro.product.model': 'Pixel 7' });
    expect((await runCaptured(android, 'getprop ro.build.version.sdk')).stdout).toBe('30\n');
    expect(android.bannerProps()).toEqual({
      'ro.product.name': 'devicebridge_sim',
      'ro.product.model': 'Pixel 7',
      'ro.product.device': 'devicebridge_sim',
    });
  });
});

describe('echo, true, false', () => {
  it('prints arguments, -n drops the newline', async () => {
    const android = sim();
    expect((await runCaptured(android, 'echo a  b')).stdout).toBe('a b\n');
    expect((await runCaptured(android, 'echo -n x')).stdout).toBe('x');
    expect((await runCaptured(android, 'echo -e "a\\tb"')).stdout).toBe('a\tb\n');
    expect((await runCaptured(android, 'true')).status).toBe(0);
    expect((await runCaptured(android, 'false')).status).toBe(1);
  });
});

describe('file commands', () => {
  it('cat reads files, stdin and reports errors', async () => {
    const android = sim();
    expect(await runCaptured(android, 'cat', ['from ', 'stdin'])).toMatchObject({
      status: 0,
      stdout: 'from stdin',
    });
    expect(await runCaptured(android, 'cat /nope')).toMatchObject({
      status: 1,
      stderr: 'cat: /nope: No such file or directory\n',
    });
    expect((await runCaptured(android, 'cat /data/local/tmp')).stderr).toBe(
      'cat: /data/local/tmp: Is a directory\n',
    );
  });

  it('cat passes binary bytes through unchanged', async () => {
    const android = sim();
    const bytes = new Uint8Array(256).map((_v, i) => i);
    android.fs.writeFile('/data/local/tmp/bin', bytes);
    expect([...(await runCaptured(android, 'cat /data/local/tmp/bin')).stdoutBytes]).toEqual([...bytes]);
  });

  it('ls lists directories and refuses /data', async () => {
    const android = sim();
    await runCaptured(android, 'mkdir /data/local/tmp/d && echo hi > /data/local/tmp/d/f');
    expect((await runCaptured(android, 'ls /data/local/tmp/d')).stdout).toBe('f\n');
    expect((await runCaptured(android, 'ls -l /data/local/tmp/d')).stdout).toMatch(
      /^total 4\n-rw-r--r-- 1 shell +shell +3 \d{4}-\d\d-\d\d \d\d:\d\d f\n$/,
    );
    expect(await runCaptured(android, 'ls /data')).toMatchObject({
      status: 1,
      stderr: 'ls: /data: Permission denied\n',
    });
    expect(await runCaptured(android, 'ls /nope')).toMatchObject({
      status: 1,
      stderr: 'ls: /nope: No such file or directory\n',
    });
    expect((await runCaptured(android, 'ls /system/bin')).stdout).toContain('sh\n');
  });

  it('rm removes files, -f silences missing ones, -r removes trees', async () => {
    const android = sim();
    await runCaptured(
      android,
      'mkdir -p /data/local/tmp/a/b && echo 1 > /data/local/tmp/a/b/c && echo 2 > /data/local/tmp/x',
    );
    expect((await runCaptured(android, 'rm /data/local/tmp/x')).status).toBe(0);
    expect(android.fs.stat('/data/local/tmp/x')).toBeUndefined();
    expect(await runCaptured(android, 'rm /data/local/tmp/x')).toMatchObject({
      status: 1,
      stderr: 'rm: /data/local/tmp/x: No such file or directory\n',
    });
    expect(await runCaptured(android, 'rm -f /data/local/tmp/x')).toMatchObject({ status: 0, stderr: '' });
    expect((await runCaptured(android, 'rm /data/local/tmp/a')).stderr).toBe(
      'rm: /data/local/tmp/a: Is a directory\n',
    );
    expect((await runCaptured(android, 'rm -rf /data/local/tmp/a')).status).toBe(0);
    expect(android.fs.stat('/data/local/tmp/a')).toBeUndefined();
    expect((await runCaptured(android, 'rm /system/bin/sh')).stderr).toBe(
      'rm: /system/bin/sh: Read-only file system\n',
    );
  });

  it('mkdir needs -p for missing parents', async () => {
    const android = sim();
    expect(await runCaptured(android, 'mkdir /data/local/tmp/p/q')).toMatchObject({
      status: 1,
      stderr: "mkdir: '/data/local/tmp/p/q': No such file or directory\n",
    });
    expect((await runCaptured(android, 'mkdir -p /data/local/tmp/p/q')).status).toBe(0);
    expect(android.fs.stat('/data/local/tmp/p/q')).toMatchObject({ type: 'dir', mode: 0o40755 });
    expect((await runCaptured(android, 'mkdir /data/local/tmp/p')).stderr).toBe(
      "mkdir: '/data/local/tmp/p': File exists\n",
    );
  });

  it('sha256sum prints toybox format, also through toybox and stdin', async () => {
    const android = sim();
    const data = new TextEncoder().encode('hello\n');
    android.fs.writeFile('/data/local/tmp/h', data);
    const digest = createHash('sha256').update(data).digest('hex');
    expect((await runCaptured(android, 'sha256sum /data/local/tmp/h')).stdout).toBe(
      `${digest}  /data/local/tmp/h\n`,
    );
    expect((await runCaptured(android, 'toybox sha256sum /data/local/tmp/h')).stdout).toBe(
      `${digest}  /data/local/tmp/h\n`,
    );
    expect((await runCaptured(android, 'sha256sum', ['hello\n'])).stdout).toBe(`${digest}  -\n`);
    expect(await runCaptured(android, 'sha256sum /nope')).toMatchObject({
      status: 1,
      stderr: 'sha256sum: /nope: No such file or directory\n',
    });
  });
});

describe('file system contract', () => {
  it('has adb-visible modes and Android error wording', () => {
    const { fs } = sim();
    expect(fs.stat('/data/local/tmp')).toMatchObject({ type: 'dir', mode: 0o40771 });
    expect(fs.stat('/system/bin')).toMatchObject({ type: 'dir', mode: 0o40755 });
    fs.writeFile('/data/local/tmp/f', new Uint8Array([1]), { mtimeSec: 1700000000 });
    expect(fs.stat('/data/local/tmp/f')).toEqual({
      type: 'file',
      size: 1,
      mode: 0o100644,
      mtimeSec: 1700000000,
    });
    fs.writeFile('/data/local/tmp/g', new Uint8Array([1]), { mode: 0o755 });
    expect(fs.stat('/data/local/tmp/g')?.mode).toBe(0o100755);
    expect(() => fs.writeFile('/system/bin/x', new Uint8Array())).toThrow('Read-only file system');
    expect(() => fs.writeFile('/data/x', new Uint8Array())).toThrow('Permission denied');
    expect(() => fs.writeFile('/data/local/tmp', new Uint8Array())).toThrow('Is a directory');
    expect(() => fs.writeFile('/data/local/tmp/no/f', new Uint8Array())).toThrow('No such file or directory');
    expect(fs.list('/data/local/tmp')?.map((e) => e.name)).toEqual(['f', 'g']);
    expect(fs.list('/data')).toBeUndefined();
    fs.mkdirp('/sdcard/Download/a/b');
    expect(fs.stat('/sdcard/Download/a/b')?.type).toBe('dir');
    expect(fs.remove('/sdcard/Download/a')).toBe(true);
    expect(fs.remove('/sdcard/Download/a')).toBe(false);
  });
});

describe('package commands', () => {
  it('streams `cmd package install -S SIZE` from stdin and leaves later input alone', async () => {
    const android = sim();
    const apk = fixture('plain-app.apk');
    const run = await runCaptured(android, `cmd package install -S ${apk.byteLength}; cat`, [
      apk.subarray(0, 1000),
      apk.subarray(1000),
      'trailing',
    ]);
    expect(run).toMatchObject({ status: 0, stdout: 'Success\ntrailing' });
    expect((await runCaptured(android, 'pm list packages --show-versioncode plain')).stdout).toBe(
      'package:com.devicebridge.fixture.plain versionCode:7\n',
    );
  });

  it('serves abb_exec-style argv installs', async () => {
    const android = sim();
    const apk = fixture('snapshot-helper-v1.apk');
    const run = await runCaptured(
      android,
      ['cmd', 'package', 'install', '-r', '-t', '-S', String(apk.byteLength)],
      [apk],
    );
    expect(run).toMatchObject({ status: 0, stdout: 'Success\n' });
  });

  it('fails a short stream and an install with no input', async () => {
    const android = sim();
    const short = await runCaptured(android, 'cmd package install -S 5000', [new Uint8Array(10)]);
    expect(short.status).toBe(1);
    expect(short.stdout).toMatch(/^Failure \[INSTALL_FAILED_INVALID_APK: /);
    const none = await runCaptured(android, 'pm install');
    expect(none).toMatchObject({
      status: 1,
      stderr: 'Error: must either specify a package size or an APK file\n',
    });
    const missing = await runCaptured(android, 'pm install /data/local/tmp/missing.apk');
    expect(missing.status).toBe(255);
    expect(missing.stderr).toContain("Error: Can't open file: /data/local/tmp/missing.apk");
  });

  it('lists packages with filters and system packages', async () => {
    const android = sim();
    const all = (await runCaptured(android, 'pm list packages')).stdout.trimEnd().split('\n');
    expect(all).toContain('package:com.android.settings');
    expect(all).toContain('package:android');
    expect((await runCaptured(android, 'pm list packages -3')).stdout).toBe('');
    expect(
      (await runCaptured(android, 'cmd package list packages --show-versioncode com.android.shell')).stdout,
    ).toBe('package:com.android.shell versionCode:34\n');
    expect((await runCaptured(android, 'pm path com.android.settings')).stdout).toBe(
      'package:/system/priv-app/Settings/Settings.apk\n',
    );
    expect(await runCaptured(android, 'pm path com.nope')).toMatchObject({ status: 1, stdout: '' });
  });

  it('answers unknown cmd services like cmd does', async () => {
    expect(await runCaptured(sim(), 'cmd nosuch')).toMatchObject({
      status: 20,
      stderr: "cmd: Can't find service: nosuch\n",
    });
  });
});

describe('am', () => {
  it('routes instrument to the helper emulation and force-stop', async () => {
    const android = sim();
    const run = await runCaptured(android, 'am instrument -w com.nope/.Runner');
    expect(run.status).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).toMatch(/instrumentation|helper emulation/i);
    expect(await runCaptured(android, 'am force-stop com.android.settings')).toMatchObject({
      status: 0,
      stdout: '',
    });
    expect((await runCaptured(android, 'am force-stop')).status).toBe(255);
  });
});

describe('settings', () => {
  it('gets realistic defaults and null for unset keys', async () => {
    const android = sim();
    expect((await runCaptured(android, 'settings get global adb_enabled')).stdout).toBe('1\n');
    expect((await runCaptured(android, 'settings get secure enabled_accessibility_services')).stdout).toBe(
      'null\n',
    );
    expect((await runCaptured(android, 'settings get system screen_off_timeout')).stdout).toBe('60000\n');
  });

  it('puts, deletes and lists', async () => {
    const android = sim();
    const svc = 'dev.glass.a11y/.GlassService';
    expect(
      (await runCaptured(android, `settings put secure enabled_accessibility_services ${svc}`)).status,
    ).toBe(0);
    expect((await runCaptured(android, 'settings get secure enabled_accessibility_services')).stdout).toBe(
      `${svc}\n`,
    );
    expect((await runCaptured(android, 'settings list secure')).stdout).toContain(
      `enabled_accessibility_services=${svc}\n`,
    );
    expect((await runCaptured(android, 'settings delete secure enabled_accessibility_services')).stdout).toBe(
      'Deleted 1 rows\n',
    );
    expect((await runCaptured(android, 'settings delete secure enabled_accessibility_services')).stdout).toBe(
      'Deleted 0 rows\n',
    );
    expect(
      (await runCaptured(android, 'settings --user 0 get secure enabled_accessibility_services')).stdout,
    ).toBe('null\n');
  });

  it('refuses put without a value and bad namespaces with exit 255', async () => {
    const android = sim();
    expect(await runCaptured(android, 'settings put secure enabled_accessibility_services')).toMatchObject({
      status: 255,
      stdout: '',
      stderr: 'Bad arguments\n',
    });
    // An empty value fails the same way and changes nothing (hosts restore an empty value by deleting).
    await runCaptured(android, 'settings put secure enabled_accessibility_services a/.B');
    expect(await runCaptured(android, "settings put secure enabled_accessibility_services ''")).toMatchObject(
      {
        status: 255,
        stdout: '',
        stderr: 'Bad arguments\n',
      },
    );
    expect((await runCaptured(android, 'settings get secure enabled_accessibility_services')).stdout).toBe(
      'a/.B\n',
    );
    expect(await runCaptured(android, 'settings put secure brand_new ""')).toMatchObject({ status: 255 });
    expect((await runCaptured(android, 'settings get secure brand_new')).stdout).toBe('null\n');
    expect(await runCaptured(android, 'settings get bogus x')).toMatchObject({
      status: 255,
      stderr: "Invalid namespace 'bogus'\n",
    });
    expect(await runCaptured(android, 'settings get secure a b')).toMatchObject({
      status: 255,
      stderr: 'Too many arguments\n',
    });
    expect(await runCaptured(android, 'settings frob')).toMatchObject({
      status: 255,
      stderr: 'Invalid command: frob\n',
    });
  });
});

describe('input and wm', () => {
  it('records injected input', async () => {
    const android = sim();
    const run = await runCaptured(
      android,
      'input tap 10 20 && input swipe 1 2 3 4 500 && input text hello%sworld && input keyevent KEYCODE_HOME 4',
    );
    expect(run.status).toBe(0);
    expect(android.inputEvents()).toEqual([
      { type: 'tap', x: 10, y: 20 },
      { type: 'swipe', x1: 1, y1: 2, x2: 3, y2: 4, durationMs: 500 },
      { type: 'text', text: 'hello world' },
      { type: 'keyevent', key: 'KEYCODE_HOME', keyCode: 3 },
      { type: 'keyevent', key: '4', keyCode: 4 },
    ]);
  });

  it('input text/keyevent/tap act on the screen model: the next dump shows them', async () => {
    const android = sim();
    const screen = android.device.screen;
    const target = screen.inputTarget()!;
    const before = screen.text(target);
    expect((await runCaptured(android, 'input text abc%sd && input keyevent KEYCODE_DEL')).status).toBe(0);
    expect(screen.text(target)).toBe(`${before}abc `);
    expect(android.device.uiXml()).toContain('abc ');
    // The cursor is at the end: FORWARD_DEL erases nothing.
    expect((await runCaptured(android, 'input keyevent KEYCODE_FORWARD_DEL')).status).toBe(0);
    expect(screen.text(target)).toBe(`${before}abc `);
    // Non-ASCII has no key events on the virtual keyboard: nothing is typed (glass's agent exists for it).
    expect((await runCaptured(android, "input text 'é'")).status).toBe(0);
    expect(screen.text(target)).toBe(`${before}abc `);
    const title = screen.nodeAt(540, 860)!;
    expect((await runCaptured(android, 'input tap 540 860')).status).toBe(0);
    expect(screen.inputTarget()).toBe(target); // a non-editable node takes no focus
    expect(screen.isEditable(title)).toBe(false);
  });

  it('rejects malformed input commands', async () => {
    const android = sim();
    const run = await runCaptured(android, 'input tap 10');
    expect(run.status).toBe(255);
    expect(run.stderr).toContain('Error: Invalid arguments for command: tap');
    expect(android.inputEvents()).toEqual([]);
  });

  it('wm size prints the physical size', async () => {
    expect((await runCaptured(sim(), 'wm size')).stdout).toBe('Physical size: 1080x2400\n');
  });
});

describe('identity commands', () => {
  it('id, whoami, uname', async () => {
    const android = sim();
    expect((await runCaptured(android, 'id')).stdout).toMatch(/^uid=2000\(shell\) gid=2000\(shell\) groups=/);
    expect((await runCaptured(android, 'whoami')).stdout).toBe('shell\n');
    expect((await runCaptured(android, 'uname')).stdout).toBe('Linux\n');
    expect((await runCaptured(android, 'uname -m')).stdout).toBe('x86_64\n');
  });
});

describe('device', () => {
  it('connects host streams to in-device listeners and refuses otherwise', async () => {
    const android = sim();
    expect(android.connect({ tcp: 7000 })).toBeUndefined();
    const listener = android.device.listen({ tcp: 7000 }, (socket) => {
      socket.on('data', (chunk: Buffer) => socket.write(`echo:${chunk.toString()}`));
      socket.on('end', () => socket.end());
    });
    const host = android.connect({ tcp: 7000 });
    expect(host).toBeDefined();
    if (host === undefined) return;
    const received: Buffer[] = [];
    host.on('data', (chunk: Buffer) => received.push(chunk));
    const ended = new Promise<void>((resolve) => host.on('end', resolve));
    host.write('ping');
    host.end();
    await ended;
    expect(Buffer.concat(received).toString()).toBe('echo:ping');
    expect(() => android.device.listen({ tcp: 7000 }, () => {})).toThrow(/in use/);
    listener.close();
    expect(android.connect({ tcp: 7000 })).toBeUndefined();
    const abstract = android.device.listen({ abstract: 'glass' }, (socket) => socket.end('hi'));
    expect(android.connect({ abstract: 'glass' })).toBeDefined();
    abstract.close();
  });

  it('seeds random() per device and shares the faults object', () => {
    const faults = { latencyMs: 5 };
    const a = createSimAndroid({ serial: 's', seed: 3, faults });
    const b = createSimAndroid({ serial: 's', seed: 3 });
    const c = createSimAndroid({ serial: 's', seed: 4 });
    const seqA = [a.device.random(), a.device.random()];
    expect([b.device.random(), b.device.random()]).toEqual(seqA);
    expect([c.device.random(), c.device.random()]).not.toEqual(seqA);
    expect(a.device.faults).toBe(faults);
    expect(a.device.displaySize()).toEqual({ width: 1080, height: 2400 });
  });

  it('serves the configured UI XML', () => {
    const xml = '<?xml version="1.0"?><hierarchy rotation="0"><node text="x"/></hierarchy>';
    expect(createSimAndroid({ serial: 'u', uiXml: xml }).device.uiXml()).toBe(xml);
    expect(createSimAndroid({ serial: 'u' }).device.uiXml()).toContain('<hierarchy');
  });
});
