// The compose stack's device farm: `devicebridge simulate` (which listens on 127.0.0.1 only) plus a
// plain TCP relay that makes each simulated device reachable on the container network:
// 0.0.0.0:RELAY_PORT+i → 127.0.0.1:SIM_PORT+i. Environment: SIM_COUNT (20), SIM_PORT (5555),
// RELAY_PORT (6555). SIGTERM/SIGINT stop the simulator and the relay; the exit code is the simulator's.
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
  server.listen(relayPort + i, '0.0.0.0');
  servers.push(server);
}
process.stdout.write(`relay: 0.0.0.0:${relayPort}..${relayPort + count - 1} -> 127.0.0.1:${simPort}..\n`);

const stop = (signal) => {
  for (const s of servers) s.close();
  sim.kill(signal);
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
sim.on('exit', (code, signal) => {
  for (const s of servers) s.close();
  process.exit(code ?? (signal ? 0 : 1));
});
