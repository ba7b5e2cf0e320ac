import { describe, expect, it } from 'vitest';
import { createLogger, lazyChild } from '../../src/observability/logger.ts';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(level, {
    write(line: string) {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  return { logger, lines, children: () => children };
}

describe('lazyChild (the per-request logger)', () => {
  it('logs with the request and lease bindings merged, through one pino child', () => {
    const { logger, lines, children } = capture('info');
    const request = lazyChild(logger, { requestId: 'r1' });
    const lease = request.child({ leaseId: 'l1', deviceId: 'd1' });
    expect(children()).toBe(0);
    lease.info({ route: '/x' }, 'request');
    lease.warn('again');
    expect(children()).toBe(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      requestId: 'r1',
      leaseId: 'l1',
      deviceId: 'd1',
      route: '/x',
      msg: 'request',
    });
    expect(lines[1]).toMatchObject({ requestId: 'r1', leaseId: 'l1', level: 40 });
    // The request's own logger still carries only its binding.
    request.error('bare');
    expect(lines[2]).toMatchObject({ requestId: 'r1', msg: 'bare' });
    expect(lines[2]).not.toHaveProperty('leaseId');
  });

  it('makes no child while the level drops the call, and redacts like its parent', () => {
    const { logger, lines, children } = capture('warn');
    const request = lazyChild(logger, { requestId: 'r2' });
    request.info('dropped');
    request.debug('dropped');
    expect(children()).toBe(0);
    request.warn({ token: 'secret-token' }, 'kept');
    expect(children()).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ requestId: 'r2', token: '[redacted]' });
    expect(request.level).toBe('warn');
    expect(request.isLevelEnabled('error')).toBe(true);
  });
});
