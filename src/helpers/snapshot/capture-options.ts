/** Capture options of the snapshot helper and the `am instrument` command line that carries them (pure). */
import { z } from 'zod';
import { quoteShellArg } from '../../adb/shell-quote.ts';
import { BridgeError } from '../../errors.ts';
import { isJavaComponent } from '../../protocol/android/java-names.ts';

export const CaptureOptionsSchema = z
  .object({
    waitForIdleTimeoutMs: z.number().int().min(0).max(60_000).default(500),
    waitForIdleQuietMs: z.number().int().min(0).max(10_000).default(100),
    timeoutMs: z.number().int().min(100).max(120_000).default(8000),
    maxDepth: z.number().int().min(1).max(1024).default(128),
    maxNodes: z.number().int().min(1).max(200_000).default(5000),
  })
  .strict();

export type CaptureOptions = z.output<typeof CaptureOptionsSchema>;
export type CaptureOptionsInput = z.input<typeof CaptureOptionsSchema>;

export function captureOptions(input: CaptureOptionsInput = {}): CaptureOptions {
  const parsed = CaptureOptionsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `capture option ${issue?.path.join('.') || '?'}: ${issue?.message}`,
      {
        details: { errors: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
      },
    );
  }
  return parsed.data;
}

export function sameCaptureOptions(a: CaptureOptions, b: CaptureOptions): boolean {
  return (
    a.waitForIdleTimeoutMs === b.waitForIdleTimeoutMs &&
    a.waitForIdleQuietMs === b.waitForIdleQuietMs &&
    a.timeoutMs === b.timeoutMs &&
    a.maxDepth === b.maxDepth &&
    a.maxNodes === b.maxNodes
  );
}

export interface InstrumentRequest {
  runner: string;
  mode?: 'snapshot' | 'viewport' | 'gesture';
  capture?: CaptureOptions;
  payloadBase64?: string;
  sessionPort?: number;
}

/** `am instrument -w -e k v ... RUNNER`, every value quoted by the one quoting function. */
export function buildInstrumentCommand(request: InstrumentRequest): string {
  if (!isJavaComponent(request.runner)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `instrumentation runner ${JSON.stringify(request.runner)} is not pkg/.Class`,
    );
  }
  const extras: Array<[string, string | number]> = [];
  if (request.mode !== undefined) extras.push(['mode', request.mode]);
  const c = request.capture;
  if (c) {
    extras.push(
      ['waitForIdleTimeoutMs', c.waitForIdleTimeoutMs],
      ['waitForIdleQuietMs', c.waitForIdleQuietMs],
      ['timeoutMs', c.timeoutMs],
      ['maxDepth', c.maxDepth],
      ['maxNodes', c.maxNodes],
    );
  }
  if (request.payloadBase64 !== undefined) {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(request.payloadBase64)) {
      throw new BridgeError('INVALID_ARGUMENT', 'gesture payload must be base64');
    }
    extras.push(['payloadBase64', request.payloadBase64]);
  }
  if (request.sessionPort !== undefined) extras.push(['sessionPort', request.sessionPort]);
  const parts = ['am', 'instrument', '-w'];
  for (const [k, v] of extras) parts.push('-e', quoteShellArg(k), quoteShellArg(v));
  parts.push(quoteShellArg(request.runner));
  return parts.join(' ');
}
