/**
 * The typed client's streamed answers (logcat, streamed shell) end when their signal aborts, also
 * over a `fetch` that does not tie the body to the request's signal (an in-process `app.request`,
 * as `/mcp` uses): the body is cancelled, so the server's side of the stream stops too.
 */
import { describe, expect, it } from 'vitest';
import { DeviceBridgeClient } from '../../src/client/index.ts';

/** A fetch answering 200 with an NDJSON body that sends `lines` and then stays open until cancelled. */
function quietStreamFetch(lines: string[]): { fetch: typeof fetch; cancelled: Promise<unknown> } {
  let onCancel: (reason: unknown) => void = () => undefined;
  const cancelled = new Promise<unknown>((resolve) => {
    onCancel = resolve;
  });
  const fetchFn = (async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const line of lines) controller.enqueue(new TextEncoder().encode(`${line}\n`));
      },
      cancel(reason) {
        onCancel(reason);
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson' } });
  }) as typeof fetch;
  return { fetch: fetchFn, cancelled };
}

const entry = { time: 1_700_000_000_000, level: 'I', tag: 'T', pid: 1, tid: 1, message: 'hello' };

describe('client streams and their signal', () => {
  it('logcat: the entries that came, then the abort ends it and cancels the body', async () => {
    const { fetch, cancelled } = quietStreamFetch([JSON.stringify(entry)]);
    const client = new DeviceBridgeClient({ baseUrl: 'http://127.0.0.1:1', fetch });
    const stop = new AbortController();
    const seen: string[] = [];
    const read = (async () => {
      for await (const e of client.logcat('lease_x', {}, stop.signal)) {
        seen.push(e.message);
        stop.abort(new Error('time is up'));
      }
    })();
    await expect(read).rejects.toThrow('time is up');
    expect(seen).toEqual(['hello']);
    await expect(cancelled).resolves.toBeInstanceOf(Error);
  });

  it('logcat: a signal aborted before the first entry ends it at once', async () => {
    const { fetch, cancelled } = quietStreamFetch([]);
    const client = new DeviceBridgeClient({ baseUrl: 'http://127.0.0.1:1', fetch });
    const stop = new AbortController();
    const read = (async () => {
      for await (const _ of client.logcat('lease_x', {}, stop.signal)) expect.unreachable();
    })();
    stop.abort(new Error('stop'));
    await expect(read).rejects.toThrow('stop');
    await cancelled;
  });

  it('shellStream: an abort mid-command ends it with the reason, not as a broken stream', async () => {
    const { fetch, cancelled } = quietStreamFetch([JSON.stringify({ stream: 'stdout', data: 'aGk=' })]);
    const client = new DeviceBridgeClient({ baseUrl: 'http://127.0.0.1:1', fetch });
    const stop = new AbortController();
    const read = (async () => {
      for await (const _ of client.shellStream('lease_x', { command: 'sleep 100' }, stop.signal))
        stop.abort(new Error('enough'));
    })();
    await expect(read).rejects.toThrow('enough');
    await cancelled;
  });
});
