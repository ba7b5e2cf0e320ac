/**
 * The bridge's glass line client against the simulator's device side (in process, no sockets):
 * readiness is the banner, ids pair replies with requests, and every way the device can break the
 * protocol fails the waiting requests with a typed, retryable error and closes the connection.
 */
import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GlassLineClient, openWhenReady } from '../../src/helpers/glass/line-client.ts';
import { duplexPair } from '../../src/simulator/android/device.ts';
import { GlassAgentProtocol } from '../../src/simulator/glass/agent.ts';
import { lineServer } from '../../src/simulator/glass/line-server.ts';

function agentSocket(clipboard = 'clip'): { host: Duplex; calls: string[] } {
  const calls: string[] = [];
  let clip: string | null = clipboard;
  const protocol = new GlassAgentProtocol({
    clipboardGet: () => clip,
    clipboardSet: (t) => {
      clip = t;
    },
    pointer: () => calls.push('pointer'),
    touch: (e) => calls.push(`touch ${e.action}`),
    key: (c) => calls.push(`key ${c.keyCode}`),
    text: (t) => calls.push(`text ${t}`),
  });
  const [host, device] = duplexPair();
  lineServer(() => (line) => protocol.handle(line)).accept(device);
  return { host, calls };
}

/** A device side that sends the banner, then answers each request line with `answer(line)`. */
function scriptedSocket(answer: (line: string) => string | null, banner = '{"hello":{"proto":1}}'): Duplex {
  const [host, device] = duplexPair();
  device.write(`${banner}\n`);
  let buffer = '';
  device.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let i = buffer.indexOf('\n'); i !== -1; i = buffer.indexOf('\n')) {
      const reply = answer(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
      if (reply !== null) device.write(`${reply}\n`);
    }
  });
  return host;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) =>
      e as { code: string; retryable: boolean; message: string; details?: Record<string, unknown> },
  );

describe('GlassLineClient', () => {
  it('is ready on the banner; pairs concurrent requests with their replies; Unicode round-trips', async () => {
    const { host, calls } = agentSocket();
    const client = await GlassLineClient.open(host, { component: 'glass-agent' });
    const [a, b, c] = await Promise.all([
      client.request('clipboard_get'),
      client.request('clipboard_set', { text: 'Grüße 👋🏽 "q" \u2028' }),
      client.request('text', { text: '世界' }),
    ]);
    expect(a).toEqual({ id: 1, ok: true, text: 'clip' });
    expect(b).toEqual({ id: 2, ok: true });
    expect(c).toEqual({ id: 3, ok: true });
    expect(await client.request('clipboard_get')).toEqual({ id: 4, ok: true, text: 'Grüße 👋🏽 "q" \u2028' });
    expect(calls).toEqual(['text 世界']);
    // A field cannot override the id or the op.
    expect(await client.request('ping', { id: 99, op: 'clipboard_set' })).toEqual({ id: 5, ok: true });
    client.close();
    expect(client.closed).toBe(true);
  });

  it('a device refusal rejects that request alone, with the device reason', async () => {
    const client = await GlassLineClient.open(agentSocket().host, { component: 'glass-agent' });
    const err = await failure(client.request('key', { chord: 'hyper+x' }));
    expect(err).toMatchObject({
      code: 'HELPER_FAILED',
      retryable: false,
      message: 'glass-agent refused key: unknown modifier "hyper" in key chord "hyper+x"',
    });
    expect(await client.request('ping')).toEqual({ id: 2, ok: true });
  });

  it.each([
    ['an id it did not send', () => '{"id":77,"ok":true}', 'id 77, which the bridge did not send'],
    [
      'the device found the line malformed',
      () => '{"id":-1,"ok":false,"error":"malformed request"}',
      'found a request line malformed',
    ],
    ['a line that is not JSON', () => 'garbage', 'not JSON'],
    ['an array', () => '[1]', 'not a JSON object'],
  ])(
    '%s: every waiting request fails HELPER_PROTOCOL_ERROR (retryable) and the connection closes',
    async (_, answer, why) => {
      const client = await GlassLineClient.open(scriptedSocket(answer), { component: 'glass-a11y' });
      const reasons: string[] = [];
      client.onClose((r) => reasons.push(r.code));
      const err = await failure(client.request('ping'));
      expect(err.code).toBe('HELPER_PROTOCOL_ERROR');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain(why);
      expect(client.closed).toBe(true);
      expect(reasons).toEqual(['HELPER_PROTOCOL_ERROR']);
      expect((await failure(client.request('ping'))).code).toBe('HELPER_PROTOCOL_ERROR');
    },
  );

  it('a dropped connection fails waiting requests UNAVAILABLE (retryable)', async () => {
    const [host, device] = duplexPair();
    device.write('{"hello":{"proto":1}}\n');
    const client = await GlassLineClient.open(host, { component: 'glass-agent' });
    const pending = client.request('ping');
    device.destroy();
    expect(await failure(pending)).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
  });

  it('a request past its deadline fails TIMEOUT and closes the connection (a late reply would be unknown)', async () => {
    const client = await GlassLineClient.open(
      scriptedSocket(() => null),
      { component: 'glass-agent' },
    );
    const err = await failure(client.request('ping', {}, { timeoutMs: 20 }));
    expect(err).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(err.message).toBe('glass-agent did not answer ping within 20 ms');
    expect(client.closed).toBe(true);
  });

  it('a connection that closes before the banner, or sends something else, is not ready', async () => {
    const [host, device] = duplexPair();
    device.destroy();
    expect(await failure(GlassLineClient.open(host, { component: 'glass-agent' }))).toMatchObject({
      code: 'UNAVAILABLE',
      retryable: true,
    });
    const wrong = scriptedSocket(() => null, '{"hello":{"proto":2}}');
    expect((await failure(GlassLineClient.open(wrong, { component: 'glass-agent' }))).message).toContain(
      'instead of the banner',
    );
  });
});

describe('openWhenReady', () => {
  it('retries until the device side listens, then answers', async () => {
    let attempts = 0;
    const client = await openWhenReady(
      async () => {
        attempts++;
        if (attempts < 3) {
          const [host, device] = duplexPair();
          device.destroy(); // a forward with nothing listening: accepted, then closed
          return host;
        }
        return agentSocket().host;
      },
      { component: 'glass-agent', companion: 'glass-agent', intervalMs: 1, totalMs: 5000 },
    );
    expect(attempts).toBe(3);
    expect(await client.request('ping')).toEqual({ id: 1, ok: true });
  });

  it('gives up after the total time, naming the attempts', async () => {
    const err = await failure(
      openWhenReady(
        async () => {
          const [host, device] = duplexPair();
          device.destroy();
          return host;
        },
        { component: 'glass-a11y', companion: 'glass-a11y', intervalMs: 1, totalMs: 30 },
      ),
    );
    expect(err.code).toBe('UNAVAILABLE');
    const count = Number(/^glass-a11y did not become ready after (\d+) attempts: /.exec(err.message)?.[1]);
    // Each attempt listed, in the shape helper errors use.
    const attempts = err.details?.['attempts'] as Array<Record<string, unknown>>;
    expect(attempts).toHaveLength(count);
    expect(count).toBeGreaterThan(1);
    for (const attempt of attempts) {
      expect(attempt).toEqual({ transport: 'glass-a11y', outcome: 'UNAVAILABLE', ms: expect.any(Number) });
    }
  });
});
