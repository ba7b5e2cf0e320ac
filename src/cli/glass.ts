/**
 * The lease's glass companions over the HTTP API (env DEVICEBRIDGE_URL, DEVICEBRIDGE_TOKEN), all with
 * `--lease ID` and `--json`:
 *   devicebridge clipboard get | clipboard set TEXT
 *   devicebridge type TEXT                      text into the focused field (faithful Unicode)
 *   devicebridge key CHORD                      ctrl+a, shift+tab, enter, f5, …
 *   devicebridge pointer X,Y,T_MS ...           a pointer gesture, points in time order
 *   devicebridge a11y tree [--raw] [--package P]
 *   devicebridge a11y set-text REF TEXT | a11y click REF [--accessibility]    (REF: e4 from the tree, or the raw 3)
 * Exit codes as for the lease commands: 0 ok, 1 failure reported by the bridge, 2 usage or invalid input.
 */
import type { Command } from 'commander';
import type { A11yNode } from '../api/index.ts';
import { UsageError } from './exit.ts';
import { type ClientFlags, client, common, run } from './lease.ts';

type LeaseFlags = ClientFlags & { lease?: string };

function leased(cmd: Command): Command {
  return common(cmd).option('--lease <id>', 'the lease whose device to act on');
}

function leaseOf(opts: LeaseFlags, what: string): string {
  if (!opts.lease) throw new UsageError(`${what} needs --lease ID`);
  return opts.lease;
}

/** The normalized tree, one node a line: ref, type, text/description, bounds, flags. */
export function formatA11yTree(root: A11yNode): string {
  const lines: string[] = [];
  const visit = (n: A11yNode, depth: number) => {
    const label = [n.text && JSON.stringify(n.text), n.contentDesc && `desc=${JSON.stringify(n.contentDesc)}`]
      .filter(Boolean)
      .join(' ');
    const flags = (['editable', 'clickable', 'scrollable'] as const).filter((f) => n[f]);
    const shown: string[] = [...flags, ...(n.enabled ? [] : ['disabled'])];
    const b = n.bounds;
    lines.push(
      `${'  '.repeat(depth)}${n.ref} ${n.type}${label ? ` ${label}` : ''} [${b.x},${b.y} ${b.width}x${b.height}]${shown.length ? ` ${shown.join(',')}` : ''}`,
    );
    for (const c of n.children) visit(c, depth + 1);
  };
  visit(root, 0);
  return lines.join('\n');
}

/** `X,Y,T_MS` → a pointer point. */
function pointOf(text: string): { x: number; y: number; t_ms: number } {
  const parts = text.split(',');
  const nums = parts.map((p) => Number(p));
  if (parts.length !== 3 || nums.some((n) => !Number.isFinite(n) || parts.some((p) => p.trim() === ''))) {
    throw new UsageError(
      `a point must be X,Y,T_MS (three numbers), got ${JSON.stringify(text.slice(0, 40))}`,
    );
  }
  const [x, y, t] = nums as [number, number, number];
  return { x, y, t_ms: t };
}

export function registerGlass(program: Command): void {
  const clipboard = program.command('clipboard').description("The leased device's clipboard (glass agent)");
  leased(clipboard.command('get').description('Print the clipboard text')).action(
    async (opts: LeaseFlags) => {
      const id = leaseOf(opts, 'clipboard get');
      const c = await client(opts);
      await run(
        opts,
        () => c.clipboard(id),
        (r) => r.text,
      );
    },
  );
  leased(
    clipboard.command('set').description('Set the clipboard text').argument('<text>', 'the text'),
  ).action(async (text: string, opts: LeaseFlags) => {
    const id = leaseOf(opts, 'clipboard set');
    const c = await client(opts);
    await run(
      opts,
      () => c.setClipboard(id, text),
      () => 'clipboard set',
    );
  });

  leased(
    program
      .command('type')
      .description('Type text into the focused field, faithful Unicode (glass agent)')
      .argument('<text>', 'the text'),
  ).action(async (text: string, opts: LeaseFlags) => {
    const id = leaseOf(opts, 'type');
    const c = await client(opts);
    await run(
      opts,
      () => c.typeText(id, text),
      () => 'typed',
    );
  });

  leased(
    program
      .command('key')
      .description('Press a key chord: ctrl+a, shift+tab, enter, f5 (glass agent)')
      .argument('<chord>', '"+"-joined modifiers and one key'),
  ).action(async (chord: string, opts: LeaseFlags) => {
    const id = leaseOf(opts, 'key');
    const c = await client(opts);
    await run(
      opts,
      () => c.pressKeys(id, chord),
      () => `pressed ${chord}`,
    );
  });

  leased(
    program
      .command('pointer')
      .description('A pointer gesture through the glass agent: points X,Y,T_MS in time order')
      .argument('<points...>', 'X,Y,T_MS (e.g. 100,200,0 300,200,150)'),
  ).action(async (points: string[], opts: LeaseFlags) => {
    const id = leaseOf(opts, 'pointer');
    const gesture = points.map(pointOf);
    const c = await client(opts);
    await run(
      opts,
      () => c.pointer(id, gesture),
      () => `pointer: ${gesture.length} points`,
    );
  });

  const a11y = program
    .command('a11y')
    .description("The leased device's accessibility tree (glass a11y service)");
  leased(a11y.command('tree').description("The active window's tree (refs e1, e2, …)"))
    .option('--raw', 'the tree as the service sent it')
    .option('--package <package>', 'the package to ask for (the service answers from the active window)')
    .action(async (opts: LeaseFlags & { raw?: boolean; package?: string }) => {
      const id = leaseOf(opts, 'a11y tree');
      const c = await client(opts);
      const query = {
        format: opts.raw ? ('raw' as const) : ('normalized' as const),
        ...(opts.package === undefined ? {} : { package: opts.package }),
      };
      await run(
        opts,
        () => c.a11yTree(id, query),
        (t) =>
          `${t.package ?? '(unnamed window)'}\n${t.format === 'raw' ? JSON.stringify(t.tree, null, 2) : formatA11yTree(t.root)}`,
      );
    });
  leased(
    a11y
      .command('set-text')
      .description('Set the text of a node of the tree last served to this lease')
      .argument('<ref>', 'e4 (or the raw 3)')
      .argument('<text>', 'the new text'),
  ).action(async (ref: string, text: string, opts: LeaseFlags) => {
    const id = leaseOf(opts, 'a11y set-text');
    const c = await client(opts);
    await run(
      opts,
      () => c.a11yAction(id, { ref, action: 'set_text', text }),
      (r) => `set the text of ${r.ref}`,
    );
  });
  leased(
    a11y
      .command('click')
      .description(
        'Click a node of the tree last served to this lease: a tap at the centre of its bounds (ACTION_CLICK does nothing on Compose), or ACTION_CLICK with --accessibility',
      )
      .argument('<ref>', 'e4 (or the raw 3)')
      .option('--accessibility', "send the a11y service's ACTION_CLICK instead of tapping the node's bounds"),
  ).action(async (ref: string, opts: LeaseFlags & { accessibility?: boolean }) => {
    const id = leaseOf(opts, 'a11y click');
    const c = await client(opts);
    await run(
      opts,
      () =>
        c.a11yAction(id, { ref, action: 'click', ...(opts.accessibility ? { via: 'accessibility' } : {}) }),
      (r) =>
        r.point ? `clicked ${r.ref} (tap at ${r.point.x},${r.point.y})` : `clicked ${r.ref} (ACTION_CLICK)`,
    );
  });
}
