import { afterEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { formatPsLine } from '../../src/simulator/android/commands/processes.ts';
import { createSimAndroid, type SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { buildDexJar } from '../support/dex-jar.ts';
import { waitFor } from '../support/wait-for.ts';

const devices: SimAndroidHandle[] = [];
const sim = (): SimAndroidHandle => {
  const android = createSimAndroid({ serial: 'proc-test', seed: 3 });
  devices.push(android);
  return android;
};

afterEach(() => {
  for (const android of devices.splice(0)) android.shutdown();
});

/** The `ps -A -o PID,USER,ARGS` rows after the header, as [pid, user, args]. */
async function psRows(android: SimAndroidHandle): Promise<Array<[string, string, string]>> {
  const run = await runCaptured(android, 'ps -A -o PID,USER,ARGS');
  const [header, ...lines] = run.stdout.trimEnd().split('\n');
  expect(header).toBe('  PID USER         ARGS');
  return lines.map((line) => {
    const match = /^ *(\d+) (\S+) +(.*)$/.exec(line);
    if (match === null) throw new Error(`bad ps line ${JSON.stringify(line)}`);
    return [match[1] as string, match[2] as string, match[3] as string];
  });
}

describe('background jobs', () => {
  it('run detached: the shell goes on at once, output is discarded, the process persists', async () => {
    const android = sim();
    // Had the shell waited for its job, the run would outlast the test's timeout.
    const run = await runCaptured(android, 'sleep 600 & echo next; echo pid=$!');
    expect(run.status).toBe(0);
    const pid = /pid=(\d+)/.exec(run.stdout)?.[1];
    expect(run.stdout).toBe(`next\npid=${pid}\n`);
    expect(android.device.processes()).toEqual([
      { pid: Number(pid), ppid: expect.any(Number), cmdline: 'sleep 600' },
    ]);
    // A later shell (another adb connection) still sees it.
    expect(await psRows(android)).toContainEqual([pid, 'shell', 'sleep 600']);
  });

  it('nohup runs its command in its place; the job output goes nowhere', async () => {
    const android = sim();
    const run = await runCaptured(android, 'nohup sleep 600 > /dev/null 2>&1 &');
    expect(run).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(android.device.processes().map((p) => p.cmdline)).toEqual(['sleep 600']);
    expect(await runCaptured(android, 'echo hi & sleep 0.01; ls /nope &')).toMatchObject({
      stdout: '',
      stderr: '',
    });
    expect(await runCaptured(android, 'nohup echo direct')).toMatchObject({ status: 0, stdout: 'direct\n' });
    expect(await runCaptured(android, 'nohup')).toMatchObject({
      status: 125,
      stderr: 'nohup: Needs 1 argument (see "nohup --help")\n',
    });
  });

  it('leaves the table when the command ends by itself', async () => {
    const android = sim();
    await runCaptured(android, 'sleep 0.02 &');
    expect(android.device.processes()).toHaveLength(1);
    await waitFor(() => android.device.processes().length === 0, {
      what: 'the ended job to leave the table',
    });
  });
});

describe('ps', () => {
  it('lists system processes, registered ones, the shell and itself', async () => {
    const android = sim();
    await runCaptured(android, 'sleep 600 &');
    const rows = await psRows(android);
    expect(rows.slice(0, 2)).toEqual([
      ['1', 'root', 'init second_stage'],
      ['2', 'root', '[kthreadd]'],
    ]);
    expect(rows).toContainEqual(['560', 'root', 'zygote64']);
    expect(rows).toContainEqual(['1043', 'system', 'system_server']);
    expect(rows).toContainEqual(['602', 'shell', 'adbd --root_seclabel=u:r:su:s0']);
    const tail = rows.slice(-3);
    expect(tail[0]?.slice(1)).toEqual(['shell', 'sleep 600']);
    expect(tail[1]?.slice(1)).toEqual(['shell', 'sh -c ps -A -o PID,USER,ARGS']);
    expect(tail[2]?.slice(1)).toEqual(['shell', 'ps -A -o PID,USER,ARGS']);
    const pids = rows.map((r) => Number(r[0]));
    expect(pids).toEqual([...pids].sort((a, b) => a - b));
    // Fresh pids for the next shell and ps.
    const again = await psRows(android);
    expect(Number(again.at(-1)?.[0])).toBeGreaterThan(Number(tail[2]?.[0]));
  });

  it('prints toybox columns: right-aligned numbers, padded USER, unpadded last field', async () => {
    const android = sim();
    const run = await runCaptured(android, 'ps -e -o PID,PPID,USER,ARGS');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('  PID  PPID USER         ARGS');
    expect(lines[1]).toBe('    1     0 root         init second_stage');
    expect(lines).toContain('  602     1 shell        adbd --root_seclabel=u:r:su:s0');
    expect(run.stdout).not.toMatch(/ \n/);
    expect(formatPsLine(['PID', 'VSZ', 'RSS'], ['1', '10899132', '3732'])).toBe('    1 10899132  3732\n');
    expect((await runCaptured(android, 'ps')).stdout.split('\n')[0]).toBe(
      'USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME',
    );
    expect(await runCaptured(android, 'ps -A -o PID,BOGUS')).toMatchObject({
      status: 1,
      stderr: 'ps: bad -o BOGUS\n',
    });
  });
});

describe('kill', () => {
  it('kills registered processes by pid with any signal spelling', async () => {
    const android = sim();
    for (let i = 0; i < 4; i++) await runCaptured(android, `sleep ${600 + i} &`);
    const pids = android.device.processes().map((p) => p.pid);
    const run = await runCaptured(
      android,
      `kill -9 ${pids[0]}; kill -KILL ${pids[1]}; kill -s KILL ${pids[2]}; toybox kill -15 ${pids[3]}`,
    );
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(android.device.processes()).toEqual([]);
    expect((await psRows(android)).map((r) => r[2])).not.toContain('sleep 600');
  });

  it('reports unknown pids as mksh and toybox do, exit 1; its own shell is harmless', async () => {
    const android = sim();
    expect(await runCaptured(android, 'kill -9 99999')).toMatchObject({
      status: 1,
      stderr: '/system/bin/sh: kill: 99999: No such process\n',
    });
    expect(await runCaptured(android, 'toybox kill 99999')).toMatchObject({
      status: 1,
      stderr: "kill: bad pid '99999': No such process\n",
    });
    expect(await runCaptured(android, 'kill 1')).toMatchObject({
      status: 1,
      stderr: '/system/bin/sh: kill: 1: Operation not permitted\n',
    });
    expect(await runCaptured(android, 'kill $$; echo still here')).toMatchObject({
      status: 0,
      stdout: 'still here\n',
    });
  });

  it('ends a backgrounded app_process glass agent and closes its socket', async () => {
    const android = sim();
    android.fs.writeFile(
      '/data/local/tmp/x.jar',
      buildDexJar(['dev.devicebridge.glassagent.Main', 'dev.devicebridge.glassagent.core.AgentProtocol']),
    );
    const run = await runCaptured(
      android,
      'nohup app_process -cp /data/local/tmp/x.jar / dev.devicebridge.glassagent.Main > /dev/null 2>&1 &',
    );
    expect(run).toMatchObject({ status: 0, stdout: '' });
    await waitFor(() => android.listening().includes('localabstract:glass-agent'), {
      what: 'the detached agent to listen',
    });
    const [agent] = android.device.processes();
    expect(agent?.cmdline).toMatch(/^app_process .*dev\.devicebridge\.glassagent\.Main/);
    expect(android.connect({ abstract: 'glass-agent' })).toBeDefined();
    expect((await runCaptured(android, `kill ${agent?.pid}`)).status).toBe(0);
    expect(android.connect({ abstract: 'glass-agent' })).toBeUndefined();
    expect(android.device.processes()).toEqual([]);
  });
});
