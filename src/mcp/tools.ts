/**
 * The device tools of the MCP server, one implementation for both transports: each call goes
 * through a typed client of the bridge's HTTP API (`DeviceBridgeClient`), so tenancy, roles,
 * capabilities and rate limits are the API's. `/mcp` hands a client that calls the bridge in
 * process with the caller's token; `devicebridge mcp` one made from DEVICEBRIDGE_URL/TOKEN.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { LeaseSelectorSchema } from '../api/index.ts';
import type { A11yNode, DeviceBridgeClient, LeaseSelector, Whoami } from '../client/index.ts';
import { type CompactNode, findNode, isEditable, renderCompactSnapshot } from './compact-snapshot.ts';
import { fitPng } from './png-scale.ts';
import { nodeSignature, type SessionState } from './session-state.ts';
import { resultOfError, ToolError, textResult } from './tool-results.ts';

/** What a tool call gets besides its arguments (the SDK's request extra, the part used here). */
export interface ToolCallExtra {
  signal: AbortSignal;
  authInfo?: { extra?: Record<string, unknown> } | undefined;
  _meta?: { progressToken?: string | number } | undefined;
  sendNotification: (notification: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
}

export interface ToolContext {
  /** The bridge client for this call (on `/mcp`, the caller's own). */
  client(extra: ToolCallExtra): DeviceBridgeClient;
  state: SessionState;
}

const leaseId = z.string().min(1).max(128).describe('the lease id acquire_device answered');
const ref = z
  .string()
  .regex(/^e[1-9][0-9]{0,8}$/, 'must be a ref of the last snapshot (e1, e2, …)')
  .describe('a ref (e12) of the last snapshot of this lease');
const coordinate = z.number().int().min(0).max(100_000);

/** A tool's handler wrapped so that whatever it throws becomes a tool error. */
function guarded<A>(
  run: (args: A, extra: ToolCallExtra) => Promise<CallToolResult>,
): (args: A, extra: ToolCallExtra) => Promise<CallToolResult> {
  return async (args, extra) => {
    try {
      return await run(args, extra);
    } catch (err) {
      return resultOfError(err);
    }
  };
}

/**
 * Refuse a tool whose API route needs no capability but whose reach is a capability's: `logcat`
 * shows what every app on the device logs (accounts, tokens, other tenants' traces), as `shell`
 * would, so it needs the `shell` capability too. Asked of the bridge (`GET /v1/whoami`): admins hold
 * every capability.
 */
async function needCapability(
  client: DeviceBridgeClient,
  capability: Whoami['capabilities'][number],
  tool: string,
): Promise<void> {
  const me = await client.whoami();
  if (!me.capabilities.includes(capability)) {
    throw new ToolError(
      'PERMISSION_DENIED',
      `${tool} needs a token with the ${capability} capability (this token, ${me.name}, lacks it)`,
      `ask an operator for a token with the ${capability} capability, or do without ${tool}`,
    );
  }
}

function* allNodes(windows: readonly CompactNode[]): Generator<CompactNode> {
  for (const w of windows) {
    yield w;
    yield* allNodes(w.children);
  }
}

function signatures(windows: readonly CompactNode[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const node of allNodes(windows)) out.set(node.ref, nodeSignature(node, isEditable(node)));
  return out;
}

async function capture(client: DeviceBridgeClient, lease: string): Promise<readonly CompactNode[]> {
  const answer = await client.snapshot(lease, { format: 'json' });
  return answer.snapshot.windows;
}

/**
 * The node `r` of the last snapshot shown for `lease`, as it is on screen now: refused (STALE_REF)
 * when the screen changed under it since that snapshot, and when no snapshot was shown yet.
 */
async function currentNode(ctx: ToolContext, client: DeviceBridgeClient, lease: string, r: string) {
  const shown = ctx.state.shown(lease);
  if (shown === undefined) {
    throw new ToolError(
      'NO_SNAPSHOT',
      `no snapshot of lease ${lease} was taken in this session, so ref ${r} means nothing yet`,
      'call snapshot first, then use a ref from it',
    );
  }
  const before = shown.get(r);
  if (before === undefined) {
    throw new ToolError(
      'STALE_REF',
      `ref ${r} is not in the last snapshot`,
      'take a new snapshot and use a ref from it',
    );
  }
  const node = findNode(await capture(client, lease), r);
  if (node === undefined || nodeSignature(node, isEditable(node)) !== before) {
    throw new ToolError(
      'STALE_REF',
      `the screen changed since the last snapshot: ref ${r} no longer names the same node`,
      'take a new snapshot and use a ref from it',
    );
  }
  return node;
}

function centre(node: CompactNode, r: string): { x: number; y: number } {
  const b = node.bounds;
  if (b === null || b.width <= 0 || b.height <= 0) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `ref ${r} has no area on screen`,
      'pick another node, or pass x and y',
    );
  }
  return { x: Math.round(b.x + b.width / 2), y: Math.round(b.y + b.height / 2) };
}

/** Where a pointing tool acts: the centre of `ref`'s node (checked against the screen now), or x,y. */
async function target(
  ctx: ToolContext,
  client: DeviceBridgeClient,
  args: { leaseId: string; ref?: string | undefined; x?: number | undefined; y?: number | undefined },
): Promise<{ x: number; y: number; via: string }> {
  const hasPoint = args.x !== undefined || args.y !== undefined;
  if (
    (args.ref === undefined) === !hasPoint ||
    (hasPoint && (args.x === undefined || args.y === undefined))
  ) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      'give either ref, or both x and y',
      'call again with ref, or with x and y',
    );
  }
  if (args.ref !== undefined) {
    const node = await currentNode(ctx, client, args.leaseId, args.ref);
    return { ...centre(node, args.ref), via: args.ref };
  }
  return { x: args.x as number, y: args.y as number, via: `${args.x},${args.y}` };
}

/** The ref of the editable accessibility node with `node`'s bounds (the same field), if any. */
function a11yMatch(root: A11yNode, node: CompactNode): string | undefined {
  const b = node.bounds;
  if (b === null) return undefined;
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop() as A11yNode;
    const nb = n.bounds;
    if (n.editable && nb.x === b.x && nb.y === b.y && nb.width === b.width && nb.height === b.height)
      return n.ref;
    stack.push(...n.children);
  }
  return undefined;
}

export function registerDeviceTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'list_devices',
    {
      description: 'List the devices of the bridge your token may see (id, state, model, labels, lease).',
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    guarded(async (_args: Record<string, never>, extra) => {
      const { devices } = await ctx.client(extra).listDevices();
      const lines = devices.map((d) => JSON.stringify(d));
      return textResult(lines.length === 0 ? 'no devices' : lines.join('\n'), { devices });
    }),
  );

  server.registerTool(
    'acquire_device',
    {
      description:
        'Lease a device for exclusive use; answers leaseId, which every device tool takes. Release it with release_device when done.',
      inputSchema: {
        selector: LeaseSelectorSchema.optional().describe(
          'which device: deviceId, labels {key: value}, sdkMin, sdkMax (default: any)',
        ),
        waitSeconds: z
          .number()
          .int()
          .min(0)
          .max(300)
          .optional()
          .describe('wait up to this long for a free device (default 0: answer at once)'),
        ttlSeconds: z
          .number()
          .int()
          .min(30)
          .max(3600)
          .optional()
          .describe('lease time to live; renewed while the session is active (default 300)'),
      },
    },
    guarded(async (args: { selector?: LeaseSelector; waitSeconds?: number; ttlSeconds?: number }, extra) => {
      const client = ctx.client(extra);
      const token = extra._meta?.progressToken;
      const started = Date.now();
      const ticker =
        token !== undefined && (args.waitSeconds ?? 0) > 0
          ? setInterval(() => {
              const waited = Math.round((Date.now() - started) / 1000);
              extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: {
                    progressToken: token,
                    progress: waited,
                    total: args.waitSeconds as number,
                    message: `waiting for a device (${waited}s)`,
                  },
                })
                .catch(() => undefined);
            }, 2000)
          : undefined;
      try {
        const lease = await client.acquireLease({
          ...(args.selector === undefined ? {} : { selector: args.selector }),
          ...(args.waitSeconds === undefined ? {} : { waitSeconds: args.waitSeconds }),
          ...(args.ttlSeconds === undefined ? {} : { ttlSeconds: args.ttlSeconds }),
        });
        ctx.state.hold(lease.id);
        return textResult(
          `leaseId: ${lease.id}\ndevice: ${lease.deviceId}\nexpires in ${lease.ttlSeconds}s (renewed while this session is active)`,
          {
            leaseId: lease.id,
            deviceId: lease.deviceId,
            ttlSeconds: lease.ttlSeconds,
            expiresAt: lease.expiresAt,
          },
        );
      } finally {
        clearInterval(ticker);
      }
    }),
  );

  server.registerTool(
    'release_device',
    {
      description: 'Release a leased device (its apps and state are reset for the next user).',
      inputSchema: { leaseId },
      annotations: { destructiveHint: true },
    },
    guarded(async (args: { leaseId: string }, extra) => {
      await ctx.client(extra).releaseLease(args.leaseId);
      ctx.state.drop(args.leaseId);
      return textResult(`released ${args.leaseId}`, { leaseId: args.leaseId, released: true });
    }),
  );

  server.registerTool(
    'snapshot',
    {
      description:
        'The screen as text: one line per node, "ref role \\"label\\" #id flags @x,y wxh", interactive nodes first. Use the refs (e12) with tap, long_press, wait_for.',
      inputSchema: {
        leaseId,
        interactiveOnly: z.boolean().optional().describe('only nodes you can act on'),
        ref: ref.optional().describe('only this node of the last snapshot and what is inside it'),
        includeHidden: z.boolean().optional().describe('also covered and off-screen nodes'),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(
      async (
        args: { leaseId: string; interactiveOnly?: boolean; ref?: string; includeHidden?: boolean },
        extra,
      ) => {
        const windows = await capture(ctx.client(extra), args.leaseId);
        let compact: ReturnType<typeof renderCompactSnapshot>;
        try {
          compact = renderCompactSnapshot(windows, {
            ...(args.interactiveOnly === undefined ? {} : { interactiveOnly: args.interactiveOnly }),
            ...(args.ref === undefined ? {} : { subtree: args.ref }),
            ...(args.includeHidden === undefined ? {} : { includeHidden: args.includeHidden }),
          });
        } catch (err) {
          if (!(err instanceof RangeError)) throw err;
          throw new ToolError('STALE_REF', err.message, 'take a snapshot without ref and use a ref from it');
        }
        ctx.state.remember(args.leaseId, signatures(windows));
        return textResult(compact.text);
      },
    ),
  );

  const pointArgs = {
    leaseId,
    ref: ref.optional(),
    x: coordinate.optional().describe('screen x in pixels (with y, instead of ref)'),
    y: coordinate.optional().describe('screen y in pixels'),
  };
  type PointArgs = { leaseId: string; ref?: string; x?: number; y?: number };

  server.registerTool(
    'tap',
    {
      description:
        'Tap a node by its ref from the last snapshot (refused if the screen changed since: take a new snapshot), or a point x,y.',
      inputSchema: pointArgs,
    },
    guarded(async (args: PointArgs, extra) => {
      const client = ctx.client(extra);
      const at = await target(ctx, client, args);
      await client.gesture(args.leaseId, { kind: 'tap', x: at.x, y: at.y });
      return textResult(`tapped ${at.via} at ${at.x},${at.y}`, { x: at.x, y: at.y });
    }),
  );

  server.registerTool(
    'long_press',
    {
      description: 'Long-press a node by ref (from the last snapshot) or a point x,y.',
      inputSchema: {
        ...pointArgs,
        durationMs: z.number().int().min(100).max(10_000).optional().describe('default 800'),
      },
    },
    guarded(async (args: PointArgs & { durationMs?: number }, extra) => {
      const client = ctx.client(extra);
      const at = await target(ctx, client, args);
      await client.gesture(args.leaseId, {
        kind: 'long-press',
        x: at.x,
        y: at.y,
        durationMs: args.durationMs ?? 800,
      });
      return textResult(`long-pressed ${at.via} at ${at.x},${at.y}`, { x: at.x, y: at.y });
    }),
  );

  server.registerTool(
    'swipe',
    {
      description: 'Swipe from one point to another (scroll: swipe up to see what is below).',
      inputSchema: {
        leaseId,
        fromX: coordinate,
        fromY: coordinate,
        toX: coordinate,
        toY: coordinate,
        durationMs: z.number().int().min(50).max(10_000).optional().describe('default 300'),
      },
    },
    guarded(
      async (
        args: {
          leaseId: string;
          fromX: number;
          fromY: number;
          toX: number;
          toY: number;
          durationMs?: number;
        },
        extra,
      ) => {
        await ctx.client(extra).gesture(args.leaseId, {
          kind: 'swipe',
          from: { x: args.fromX, y: args.fromY },
          to: { x: args.toX, y: args.toY },
          durationMs: args.durationMs ?? 300,
        });
        return textResult(`swiped ${args.fromX},${args.fromY} → ${args.toX},${args.toY}`);
      },
    ),
  );

  server.registerTool(
    'pinch',
    {
      description: 'Pinch around a centre point: endDistance > startDistance zooms in, smaller zooms out.',
      inputSchema: {
        leaseId,
        x: coordinate.describe('centre x'),
        y: coordinate.describe('centre y'),
        startDistance: z
          .number()
          .min(1)
          .max(10_000)
          .describe('distance between the two fingers at the start'),
        endDistance: z.number().min(1).max(10_000).describe('distance at the end'),
        durationMs: z.number().int().min(50).max(10_000).optional().describe('default 400'),
      },
    },
    guarded(
      async (
        args: {
          leaseId: string;
          x: number;
          y: number;
          startDistance: number;
          endDistance: number;
          durationMs?: number;
        },
        extra,
      ) => {
        await ctx.client(extra).gesture(args.leaseId, {
          kind: 'pinch',
          center: { x: args.x, y: args.y },
          startDistance: args.startDistance,
          endDistance: args.endDistance,
          durationMs: args.durationMs ?? 400,
        });
        return textResult(`pinched at ${args.x},${args.y}: ${args.startDistance} → ${args.endDistance}`);
      },
    ),
  );

  server.registerTool(
    'set_text',
    {
      description:
        "Replace a field's whole text by its ref from the last snapshot, through the accessibility service (type_text appends instead).",
      inputSchema: { leaseId, ref, text: z.string().max(65_536) },
    },
    guarded(async (args: { leaseId: string; ref: string; text: string }, extra) => {
      const client = ctx.client(extra);
      const node = await currentNode(ctx, client, args.leaseId, args.ref);
      if (!isEditable(node)) {
        throw new ToolError(
          'INVALID_ARGUMENT',
          `ref ${args.ref} is not a text field`,
          'pick a node whose role is edit',
        );
      }
      const tree = await client.a11yTree(args.leaseId);
      const same = a11yMatch(tree.root, node);
      if (same === undefined) {
        throw new ToolError(
          'COMPANION_REFUSED',
          `the accessibility tree has no editable node at ref ${args.ref}'s bounds`,
          'tap the field and use type_text instead',
        );
      }
      await client.a11yAction(args.leaseId, { ref: same, action: 'set_text', text: args.text });
      return textResult(`set the text of ${args.ref}`);
    }),
  );

  server.registerTool(
    'type_text',
    {
      description:
        'Type text into the focused field, exactly as given (any Unicode). Tap the field first to focus it.',
      inputSchema: { leaseId, text: z.string().min(1).max(65_536) },
    },
    guarded(async (args: { leaseId: string; text: string }, extra) => {
      await ctx.client(extra).typeText(args.leaseId, args.text);
      return textResult(`typed ${[...args.text].length} characters`);
    }),
  );

  server.registerTool(
    'press_key',
    {
      description: 'Press a key or chord: enter, back, home, tab, backspace, ctrl+a, shift+tab, f5.',
      inputSchema: { leaseId, chord: z.string().min(1).max(200) },
    },
    guarded(async (args: { leaseId: string; chord: string }, extra) => {
      await ctx.client(extra).pressKeys(args.leaseId, args.chord);
      return textResult(`pressed ${args.chord}`);
    }),
  );

  server.registerTool(
    'screenshot',
    {
      description:
        'A PNG screenshot of the device screen, scaled down to fit maxWidth × maxHeight when given (screen coordinates stay the full size).',
      inputSchema: {
        leaseId,
        maxWidth: z
          .number()
          .int()
          .min(16)
          .max(10_000)
          .optional()
          .describe('scale down to at most this width'),
        maxHeight: z
          .number()
          .int()
          .min(16)
          .max(10_000)
          .optional()
          .describe('scale down to at most this height'),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(async (args: { leaseId: string; maxWidth?: number; maxHeight?: number }, extra) => {
      const shot = await ctx.client(extra).screenshot(args.leaseId);
      if (shot.notModified) throw new ToolError('INTERNAL', 'no image', 'call again');
      const fitted =
        args.maxWidth === undefined && args.maxHeight === undefined
          ? null
          : fitPng(
              shot.png,
              args.maxWidth ?? Number.MAX_SAFE_INTEGER,
              args.maxHeight ?? Number.MAX_SAFE_INTEGER,
            );
      const png = fitted?.png ?? shot.png;
      const size = fitted === null ? '' : `, image scaled to ${fitted.width}x${fitted.height}`;
      return {
        content: [
          { type: 'image', data: Buffer.from(png).toString('base64'), mimeType: 'image/png' },
          { type: 'text', text: `screen ${shot.width}x${shot.height}${size}` },
        ],
      };
    }),
  );

  server.registerTool(
    'wait_for',
    {
      description:
        'Wait until a text (or a ref of the last snapshot) appears, or with gone: true disappears; answers as soon as it does, or a TIMEOUT error at the deadline.',
      inputSchema: {
        leaseId,
        text: z
          .string()
          .min(1)
          .max(1000)
          .optional()
          .describe('a text or content description to look for (substring)'),
        ref: ref.optional(),
        gone: z.boolean().optional().describe('wait for it to disappear instead'),
        timeoutSeconds: z.number().min(1).max(120).optional().describe('default 10'),
      },
    },
    guarded(
      async (
        args: { leaseId: string; text?: string; ref?: string; gone?: boolean; timeoutSeconds?: number },
        extra,
      ) => {
        if ((args.text === undefined) === (args.ref === undefined)) {
          throw new ToolError(
            'INVALID_ARGUMENT',
            'give exactly one of text or ref',
            'call again with text or ref',
          );
        }
        const client = ctx.client(extra);
        const wanted = args.ref === undefined ? undefined : ctx.state.shown(args.leaseId)?.get(args.ref);
        if (args.ref !== undefined && wanted === undefined) {
          throw new ToolError(
            'STALE_REF',
            `ref ${args.ref} is not in the last snapshot`,
            'take a new snapshot first',
          );
        }
        const present = (windows: readonly CompactNode[]): boolean => {
          for (const node of allNodes(windows)) {
            if (args.text !== undefined) {
              if (node.text.includes(args.text) || node.contentDesc.includes(args.text)) return true;
            } else if (node.ref === args.ref && nodeSignature(node, isEditable(node)) === wanted) return true;
          }
          return false;
        };
        const deadline = Date.now() + (args.timeoutSeconds ?? 10) * 1000;
        const what = args.text === undefined ? `ref ${args.ref}` : JSON.stringify(args.text);
        for (;;) {
          const windows = await capture(client, args.leaseId);
          if (present(windows) !== (args.gone ?? false)) {
            return textResult(`${what} ${args.gone ? 'is gone' : 'is there'}`, { met: true });
          }
          if (Date.now() >= deadline || extra.signal.aborted) {
            throw new ToolError(
              'TIMEOUT',
              `${what} did not ${args.gone ? 'disappear' : 'appear'} within ${args.timeoutSeconds ?? 10}s`,
              'take a snapshot to see the screen, or wait longer',
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      },
    ),
  );

  server.registerTool(
    'clipboard_get',
    {
      description: "The device's clipboard text.",
      inputSchema: { leaseId },
      annotations: { readOnlyHint: true },
    },
    guarded(async (args: { leaseId: string }, extra) => {
      const { text } = await ctx.client(extra).clipboard(args.leaseId);
      return textResult(text, { text });
    }),
  );

  server.registerTool(
    'clipboard_set',
    {
      description: "Set the device's clipboard text.",
      inputSchema: { leaseId, text: z.string().max(65_536) },
    },
    guarded(async (args: { leaseId: string; text: string }, extra) => {
      await ctx.client(extra).setClipboard(args.leaseId, args.text);
      return textResult('clipboard set');
    }),
  );

  const packageName = z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/, 'must be a package name (com.example.app)');
  server.registerTool(
    'launch_app',
    {
      description: 'Launch an installed app by package name (its launcher activity).',
      inputSchema: { leaseId, package: packageName },
    },
    guarded(async (args: { leaseId: string; package: string }, extra) => {
      await ctx.client(extra).appAction(args.leaseId, args.package, 'launch');
      return textResult(`launched ${args.package}`);
    }),
  );

  server.registerTool(
    'stop_app',
    { description: 'Force-stop an app by package name.', inputSchema: { leaseId, package: packageName } },
    guarded(async (args: { leaseId: string; package: string }, extra) => {
      await ctx.client(extra).appAction(args.leaseId, args.package, 'stop');
      return textResult(`stopped ${args.package}`);
    }),
  );

  server.registerTool(
    'install_app',
    {
      description:
        'Install an app on the leased device by the sha256 of an APK uploaded to or published on the bridge; removed at the lease end unless keep.',
      inputSchema: {
        leaseId,
        sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
        keep: z.boolean().optional().describe('leave it installed when the lease ends'),
      },
    },
    guarded(async (args: { leaseId: string; sha256: string; keep?: boolean }, extra) => {
      const app = await ctx.client(extra).installApp(args.leaseId, {
        sha256: args.sha256,
        ...(args.keep === undefined ? {} : { keep: args.keep }),
      });
      return textResult(`installed ${app.packageName} ${app.versionName ?? app.versionCode}`, { ...app });
    }),
  );

  server.registerTool(
    'logcat',
    {
      description:
        "Read the device's log (needs a token with the shell capability): the entries that arrive within `seconds` (default 2), at most `lines` (default 200).",
      inputSchema: {
        leaseId,
        lines: z.number().int().min(1).max(2000).optional(),
        seconds: z.number().min(0.1).max(30).optional(),
        level: z.enum(['V', 'D', 'I', 'W', 'E', 'F']).optional().describe('the lowest level'),
        tag: z.string().min(1).max(128).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(
      async (
        args: {
          leaseId: string;
          lines?: number;
          seconds?: number;
          level?: 'V' | 'D' | 'I' | 'W' | 'E' | 'F';
          tag?: string;
        },
        extra,
      ) => {
        const client = ctx.client(extra);
        await needCapability(client, 'shell', 'logcat');
        const limit = args.lines ?? 200;
        const stop = AbortSignal.any([AbortSignal.timeout((args.seconds ?? 2) * 1000), extra.signal]);
        const lines: string[] = [];
        try {
          const entries = client.logcat(
            args.leaseId,
            {
              ...(args.level === undefined ? {} : { level: args.level }),
              ...(args.tag === undefined ? {} : { tag: args.tag }),
            },
            stop,
          );
          for await (const e of entries) {
            lines.push(`${new Date(e.time).toISOString()} ${e.level}/${e.tag}(${e.pid}): ${e.message}`);
            if (lines.length >= limit) break;
          }
        } catch (err) {
          // The time is up (the stream aborted): what arrived is the answer.
          if (!stop.aborted) throw err;
        }
        return textResult(lines.length === 0 ? 'no log entries' : lines.join('\n'), { count: lines.length });
      },
    ),
  );

  server.registerTool(
    'shell',
    {
      description:
        'Run one shell command on the device (needs a token with the shell capability); output is bounded.',
      inputSchema: {
        leaseId,
        command: z.string().min(1).max(8192).describe('one shell command line'),
        timeoutMs: z.number().int().min(1).max(300_000).optional(),
      },
    },
    guarded(async (args: { leaseId: string; command: string; timeoutMs?: number }, extra) => {
      const out = await ctx.client(extra).shell(args.leaseId, {
        command: args.command,
        ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
      });
      return textResult(JSON.stringify(out), { ...out });
    }),
  );
}
