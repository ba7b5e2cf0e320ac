/**
 * The floor of relaying one message on this machine (`node test/bench/support/relay-floor.mjs`): a
 * process that only reads each message from one loopback TCP socket and writes it to another — no
 * framing, no WebSocket — fed at 30 messages/s of 300 bytes by a child process that also drains the
 * other side. Prints this process's CPU (process.cpuUsage()) per message over 8 s. The live screen
 * relay (test/bench/screen-live.bench.ts) does this and more per frame, so its per-frame CPU cannot be
 * below this figure.
 */
import { fork } from 'node:child_process';
import net from 'node:net';

if (process.argv[2] === 'child') {
  const [inPort, outPort] = process.argv.slice(3).map(Number);
  const drain = net.connect(outPort);
  drain.on('data', () => undefined);
  const feed = net.connect(inPort, () => {
    const message = Buffer.alloc(300, 1);
    setInterval(() => feed.write(message), 1000 / 30);
  });
} else {
  let out = null;
  let count = 0;
  const outServer = net
    .createServer((s) => {
      out = s;
    })
    .listen(0);
  const inServer = net
    .createServer((s) =>
      s.on('data', (chunk) => {
        count++;
        out?.write(chunk);
      }),
    )
    .listen(0);
  await new Promise((r) => setTimeout(r, 200));
  const child = fork(new URL(import.meta.url).pathname, [
    'child',
    String(inServer.address().port),
    String(outServer.address().port),
  ]);
  await new Promise((r) => setTimeout(r, 2000));
  const before = process.cpuUsage();
  const first = count;
  await new Promise((r) => setTimeout(r, 8000));
  const used = process.cpuUsage(before);
  const messages = count - first;
  const ms = (us) => (us / 1000 / messages).toFixed(3);
  console.log(
    `relay floor: ${messages} messages, ${ms(used.user + used.system)} ms CPU per message (user ${ms(used.user)}, system ${ms(used.system)})`,
  );
  child.kill();
  process.exit(0);
}
