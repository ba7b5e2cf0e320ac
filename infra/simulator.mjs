// The compose stack's device farm: `devicebridge simulate` (which listens on 127.0.0.1 only) plus a
// plain TCP relay that makes each simulated device reachable on the container network:
// 0.0.0.0:RELAY_PORT+i → 127.0.0.1:SIM_PORT+i. Each relay port listens only once its device
// accepts a connection: a relay that accepted while the simulator was still starting could only
// close the connection again, and the bridges' adb servers would see a device that drops them
// (refused is what a device that is not up yet looks like). Environment: SIM_COUNT (20),
// SIM_PORT (5555), RELAY_PORT (6555). SIGTERM/SIGINT stop the simulator and the relay; the exit
// code is the simulator's.
import { spawn } from 'node:child_process';
import net from 'node:net';

const count = Number(process.env.SIM_COUNT || 20);
const simPort = Number(process.env.SIM_PORT || 5555);
const relayPort = Number(process.env.RELAY_PORT || 6555);
const bin = new URL('../dist/cli/bin.js', import.meta.url).pathname;

const sim = spawn(process.execPath, [bin, 'simulate', '--port', String(simPort), '--count', String(count)], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
const servers = [];
let stopping = false;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Resolves once 127.0.0.1:port accepts a connection (polled every 100 ms). */
async function accepting(port) {
  while (!stopping) {
    const ok = await new Promise((resolve) => {
      const probe = net.connect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(true);
      });
      probe.once('error', () => resolve(false));
    });
    if (ok) return true;
    await sleep(100);
  }
  return false;
}
for (let i = 0; i < count; i++) {
  const server = net.createServer((client) => {
    const device = net.connect(simPort + i, '127.0.0.1');
    client.setNoDelay(true);
    device.setNoDelay(true);
    client.pipe(device).pipe(client);
    const end = () => {
      client.destroy();
      device.destroy();
    };
    client.on('error', end).on('close', end);
    device.on('error', end).on('close', end);
  });
  servers.push(server);
}
Promise.all(
  servers.map(async (server, i) => {
    if (await accepting(simPort + i)) server.listen(relayPort + i, '0.0.0.0');
  }),
).then(() => {
  if (!stopping)
    process.stdout.write(`relay: 0.0.0.0:${relayPort}..${relayPort + count - 1} -> 127.0.0.1:${simPort}..\n`);
});

const stop = (signal) => {
  stopping = true;
  for (const s of servers) if (s.listening) s.close();
  sim.kill(signal);
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
sim.on('exit', (code, signal) => {
  stopping = true;
  for (const s of servers) if (s.listening) s.close();
  process.exit(code ?? (signal ? 0 : 1));
});
