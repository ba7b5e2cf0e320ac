/** formatLogLine: pino JSON lines as human lines for a terminal (pure), and the format choice. */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { formatLogLine, resolveLogFormat } from '../../src/observability/log-format.ts';
import { prettyStream, REDACT_PATHS } from '../../src/observability/logger.ts';

describe('formatLogLine', () => {
  it('puts time, level and message first, then every other field as key=value', () => {
    const line = JSON.stringify({
      level: 30,
      time: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
      pid: 1,
      hostname: 'h',
      service: 'devicebridge',
      msg: 'lease: acquired',
      leaseId: 'lease_abc',
      deviceId: '127.0.0.1:5555',
      tenant: 'acme corp',
      n: 3,
    });
    expect(formatLogLine(line)).toBe(
      '03:04:05.678 INFO  lease: acquired leaseId=lease_abc deviceId=127.0.0.1:5555 tenant="acme corp" n=3',
    );
    expect(formatLogLine(JSON.stringify({ level: 50, time: 0, msg: 'x', err: { code: 'E' } }))).toBe(
      '00:00:00.000 ERROR x err={"code":"E"}',
    );
  });

  it('prints no control character raw: device-controlled text cannot drive the terminal (message, keys, values)', () => {
    const line = JSON.stringify({
      level: 50,
      time: 0,
      msg: 'pm said \u001b[2J\u009b31m',
      'k\u001b]0;x\u0007': 'a\u001bb',
      nested: { text: '\u0085\u007f' },
    });
    const out = formatLogLine(line);
    expect(out).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(out).toContain('\\u001b[2J');
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' })),
        fc.string({ unit: 'binary' }),
        (fields, msg) => {
          expect(formatLogLine(JSON.stringify({ ...fields, level: 30, msg }))).not.toMatch(
            /[\u0000-\u001f\u007f-\u009f]/,
          );
        },
      ),
    );
  });

  it('never throws and keeps every field: any JSON object, any non-JSON line unchanged', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => k !== '__proto__'),
          fc.jsonValue(),
        ),
        (entry) => {
          const out = formatLogLine(JSON.stringify(entry));
          expect(out).not.toContain('\n');
          for (const key of Object.keys(entry)) {
            if (!['level', 'time', 'msg', 'service', 'pid', 'hostname'].includes(key))
              expect(out).toContain(`${key}=`);
          }
        },
      ),
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          expect(formatLogLine(text)).toBe(text);
          return;
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          expect(formatLogLine(text)).toBe(text);
      }),
    );
  });

  it('auto is pretty on a terminal and JSON otherwise; json and pretty are what they say', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('the pretty stream writes one human line per log line, redaction applied', async () => {
    const lines: string[] = [];
    const stream = prettyStream({ write: (text: string) => lines.push(text) });
    const logger = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, stream);
    logger.info({ leaseId: 'l1', token: 'secret' }, 'lease: released');
    logger.warn('second');
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}lease: released leaseId=l1 token=\[redacted\]\n$/,
    );
    expect(lines[1]).toMatch(/ WARN {2}second\n$/);
    expect(lines.join('')).not.toContain('secret');
  });
});
