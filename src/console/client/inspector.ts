/**
 * The inspector: for a leased device, the screenshot with the normalized snapshot's node boxes over
 * it (hover shows the node, click selects it in the tree), the tree (search by text / id / class;
 * refs shown; covered and off-screen nodes marked), the selected node's attributes, tap, swipe and
 * text input (the glass agent) through the lease API, refresh after each action, raw XML download;
 * the doctor's report for the lease (doctor.ts); the live screen (live-screen.ts), started on demand.
 */

import type {
  Bounds,
  SnapshotJsonResponse,
  SnapshotNode,
  SnapshotXmlResponse,
} from '../../api/helper-operations.ts';
import type { LeaseList } from '../../api/leases.ts';
import { api, blob, el, status } from './api.ts';
import { doctorSection } from './doctor.ts';
import { liveViewOnPage } from './screen.ts';

interface Flat {
  node: SnapshotNode;
  depth: number;
}

const ATTRIBUTES: ReadonlyArray<keyof SnapshotNode> = [
  'ref',
  'type',
  'className',
  'text',
  'contentDesc',
  'resourceId',
  'package',
  'hint',
  'bounds',
  'visible',
  'hittable',
  'covered',
  'clickable',
  'longClickable',
  'enabled',
  'focusable',
  'focused',
  'scrollable',
  'checkable',
  'checked',
  'selected',
  'password',
];

function flatten(nodes: SnapshotNode[], depth = 0, out: Flat[] = []): Flat[] {
  for (const node of nodes) {
    out.push({ node, depth });
    flatten(node.children, depth + 1, out);
  }
  return out;
}

/** The part of `b` on a screen of `size` (null when none of it is): what a box shows and a tap hits. */
function onScreen(b: Bounds, size: { width: number; height: number }): Bounds | null {
  const x = Math.max(0, b.x);
  const y = Math.max(0, b.y);
  const width = Math.min(size.width, b.x + b.width) - x;
  const height = Math.min(size.height, b.y + b.height) - y;
  return width > 0 && height > 0 ? { x, y, width, height } : null;
}

/** Characters as people count them (an emoji with its modifiers is one). */
const characters = (text: string): number => [...new Intl.Segmenter().segment(text)].length;

function label(n: SnapshotNode): string {
  const name = n.text || n.contentDesc;
  const id = n.resourceId ? ` #${n.resourceId.replace(/^.*:id\//, '')}` : '';
  return `${n.type}${name ? ` "${name}"` : ''}${id}`;
}

export function inspectorPage(): void {
  const select = document.getElementById('lease-select') as HTMLSelectElement;
  const controls = document.getElementById('inspector-controls') as HTMLFormElement;
  const img = document.getElementById('screenshot') as HTMLImageElement;
  const screen = document.getElementById('screen')!;
  const empty = document.getElementById('screen-empty')!;
  const layout = document.querySelector<HTMLElement>('.inspector')!;
  const boxes = document.getElementById('boxes')!;
  const tree = document.getElementById('tree')!;
  const search = document.getElementById('tree-search') as HTMLInputElement;
  const attrs = document.getElementById('attrs')!;
  const tapMode = document.getElementById('tap-mode') as HTMLInputElement;
  const tapSelected = document.getElementById('tap-selected') as HTMLButtonElement;
  const swipe = document.getElementById('text-form') as HTMLFormElement;
  let flat: Flat[] = [];
  let selected: string | null = null;
  let size = { width: 1, height: 1 };
  let objectUrl: string | null = null;

  const lease = () => select.value;
  /** The selected node's part on the screen (null: none, or none of it on screen). */
  const selectedPart = (): Bounds | null => {
    const b = flat.find((f) => f.node.ref === selected)?.node.bounds;
    return b ? onScreen(b, size) : null;
  };

  /** The boxes in tree order: the order the arrow keys move in. */
  const boxOrder = (): HTMLElement[] => {
    const byRef = new Map([...boxes.querySelectorAll<HTMLElement>('.box')].map((b) => [b.dataset['ref'], b]));
    return flat.flatMap((f) => byRef.get(f.node.ref) ?? []);
  };

  /** Roving tabindex: exactly one box (the selected one, else the first) is in the tab order. */
  const rove = (to: HTMLElement | undefined) => {
    for (const b of boxes.querySelectorAll<HTMLElement>('.box')) b.tabIndex = b === to ? 0 : -1;
  };

  const choose = (ref: string | null, scroll = true) => {
    selected = ref;
    for (const b of boxes.querySelectorAll<HTMLElement>('.box')) {
      b.classList.toggle('selected', b.dataset['ref'] === ref);
      b.setAttribute('aria-pressed', String(b.dataset['ref'] === ref));
    }
    const order = boxOrder();
    rove(order.find((b) => b.dataset['ref'] === ref) ?? order[0]);
    for (const li of tree.querySelectorAll<HTMLElement>('li')) {
      const on = li.dataset['ref'] === ref;
      li.setAttribute('aria-selected', String(on));
      if (on && scroll) li.scrollIntoView({ block: 'nearest' });
    }
    const node = flat.find((f) => f.node.ref === ref)?.node;
    tapSelected.disabled = selectedPart() === null;
    attrs.replaceChildren(
      ...(node
        ? ATTRIBUTES.flatMap((k) => {
            const v = node[k];
            return [
              el('dt', {}, k),
              el('dd', {}, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v ?? '')),
            ];
          })
        : []),
    );
  };

  const renderTree = () => {
    const q = search.value.trim().toLowerCase();
    const shown = q
      ? flat.filter(({ node: n }) =>
          [n.text, n.contentDesc, n.resourceId, n.className, n.ref].some((s) => s.toLowerCase().includes(q)),
        )
      : flat;
    tree.replaceChildren(
      ...shown.map(({ node, depth }) => {
        const offscreen = node.bounds !== null && (!node.visible || onScreen(node.bounds, size) === null);
        const li = el(
          'li',
          {
            role: 'option',
            tabindex: '0',
            'data-ref': node.ref,
            'aria-selected': String(node.ref === selected),
          },
          el('span', { class: 'ref' }, node.ref),
          ` ${label(node)}`,
          node.covered ? el('span', { class: 'mark' }, 'covered') : null,
          offscreen ? el('span', { class: 'mark' }, 'off-screen') : null,
        );
        // CSSOM, not a style attribute: the page's CSP allows no inline styles.
        li.style.paddingLeft = `${0.3 + (q ? 0 : depth) * 0.9}rem`;
        li.addEventListener('click', () => choose(node.ref, false));
        li.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            choose(node.ref, false);
          } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            const next = (
              e.key === 'ArrowDown' ? li.nextElementSibling : li.previousElementSibling
            ) as HTMLElement | null;
            next?.focus();
          }
        });
        return li;
      }),
    );
  };

  const renderBoxes = () => {
    // Each visible node's part on the screen, largest first (smaller boxes on top); a node wholly
    // off the screen (scrolled away, another rotation's bounds) gets none.
    const shown = flat
      .flatMap(({ node }) => {
        const part = node.visible && node.bounds ? onScreen(node.bounds, size) : null;
        return part === null ? [] : [{ node, b: part }];
      })
      .sort((p, q) => q.b.width * q.b.height - p.b.width * p.b.height);
    boxes.replaceChildren(
      ...shown.map(({ node, b }) => {
        const box = el('button', {
          type: 'button',
          class: `box${node.ref === selected ? ' selected' : ''}`,
          'data-ref': node.ref,
          title: `${node.ref} ${label(node)}`,
          'aria-label': `${node.ref} ${label(node)}`,
          'aria-pressed': String(node.ref === selected),
          tabindex: '-1',
        });
        Object.assign(box.style, {
          left: `${(b.x / size.width) * 100}%`,
          top: `${(b.y / size.height) * 100}%`,
          width: `${(b.width / size.width) * 100}%`,
          height: `${(b.height / size.height) * 100}%`,
        });
        box.addEventListener('click', (e) => {
          e.stopPropagation();
          choose(node.ref);
        });
        box.addEventListener('mouseenter', () => status(`${node.ref} ${label(node)}`));
        // Keyboard: the focused box shows its node like a hover; Enter or Space (the button's own
        // click) selects it; arrows move to the next / previous node in tree order, Home / End to
        // the first / last.
        box.addEventListener('focus', () => status(`${node.ref} ${label(node)}`));
        box.addEventListener('keydown', (e) => {
          const order = boxOrder();
          const at = order.indexOf(box);
          const to =
            e.key === 'ArrowDown' || e.key === 'ArrowRight'
              ? order[Math.min(order.length - 1, at + 1)]
              : e.key === 'ArrowUp' || e.key === 'ArrowLeft'
                ? order[Math.max(0, at - 1)]
                : e.key === 'Home'
                  ? order[0]
                  : e.key === 'End'
                    ? order[order.length - 1]
                    : undefined;
          if (to === undefined) return;
          e.preventDefault();
          rove(to);
          to.focus();
        });
        return box;
      }),
    );
  };

  /** A fresh screenshot and snapshot; answers what it shows, for the status line. */
  const capture = async (): Promise<string> => {
    const id = encodeURIComponent(lease());
    const [png, snap] = await Promise.all([
      blob(`/v1/leases/${id}/screenshot`),
      api<SnapshotJsonResponse>('POST', `/v1/leases/${id}/snapshot`, {}),
    ]);
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = URL.createObjectURL(png);
    const shown = await new Promise<boolean>((resolve) => {
      img.onload = () => resolve(true);
      img.onerror = () => resolve(false);
      img.src = objectUrl!;
    });
    // No <img> on the page until there is a picture: a broken one shows the browser's icon.
    img.hidden = !shown;
    empty.hidden = shown;
    if (!shown) empty.textContent = 'The screenshot could not be shown (not an image).';
    size = { width: img.naturalWidth || 1, height: img.naturalHeight || 1 };
    // The layout sizes the screen from its picture (console.css, .inspector).
    layout.style.setProperty('--screen-natural-width', `${size.width}px`);
    layout.style.setProperty('--screen-aspect', String(size.width / size.height));
    flat = flatten(snap.snapshot.windows);
    if (selected !== null && !flat.some((f) => f.node.ref === selected)) selected = null;
    renderTree();
    renderBoxes();
    choose(selected, false);
    screen.dataset['ready'] = String(Date.now());
    return `snapshot: ${snap.snapshot.nodeCount} nodes; screen ${size.width}×${size.height}`;
  };

  const refresh = async () => {
    if (!lease()) {
      status('acquire a lease first (Leases page)');
      return;
    }
    status('capturing…');
    status(await capture());
  };

  /**
   * One lease action, then a fresh snapshot and screenshot; the status line says what was done
   * (`done`, e.g. `typed 4 characters`) and what the screen shows now.
   */
  const perform = async (what: string, done: string, route: string, body: Record<string, unknown>) => {
    try {
      await api('POST', `/v1/leases/${encodeURIComponent(lease())}/${route}`, body);
      status(`${done}; capturing…`);
      status(`${done}; ${await capture()}`);
    } catch (err) {
      status(`${what} failed: ${(err as Error).message}`);
    }
  };
  const act = (what: string, done: string, gesture: Record<string, unknown>) =>
    perform(what, done, 'gestures', gesture);

  screen.addEventListener('click', (e) => {
    if (!tapMode.checked || !img.naturalWidth) return;
    const r = img.getBoundingClientRect();
    const x = Math.round(((e.clientX - r.left) / r.width) * size.width);
    const y = Math.round(((e.clientY - r.top) / r.height) * size.height);
    void act(`tap at ${x},${y}`, `tapped at ${x},${y}`, { kind: 'tap', x, y });
  });
  tapMode.addEventListener('change', () => screen.classList.toggle('tapping', tapMode.checked));
  tapSelected.addEventListener('click', () => {
    // The centre of the node's part on the screen (a partly scrolled-away node's whole centre may be off it).
    const b = selectedPart();
    if (b === null) return;
    const x = Math.round(b.x + b.width / 2);
    const y = Math.round(b.y + b.height / 2);
    void act(`tap ${selected} at ${x},${y}`, `tapped ${selected} at ${x},${y}`, { kind: 'tap', x, y });
  });
  swipe.addEventListener('submit', (e) => {
    e.preventDefault();
    const point = (name: string) => {
      const [x, y] = (swipe.elements.namedItem(name) as HTMLInputElement).value
        .split(',')
        .map((s) => Number(s.trim()));
      return { x: x ?? Number.NaN, y: y ?? Number.NaN };
    };
    const from = point('from');
    const to = point('to');
    if ([from.x, from.y, to.x, to.y].some((n) => !Number.isFinite(n))) {
      status('swipe needs two points as x,y');
      return;
    }
    void act('swipe', `swiped from ${from.x},${from.y} to ${to.x},${to.y}`, { kind: 'swipe', from, to });
  });
  const typeForm = document.getElementById('type-form') as HTMLFormElement;
  typeForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const input = typeForm.elements.namedItem('text') as HTMLInputElement;
    if (input.value === '') {
      status('type needs some text');
      return;
    }
    // The glass agent types the exact code points (emoji, CJK, RTL) into the focused field.
    const n = characters(input.value);
    void perform('type', `typed ${n} character${n === 1 ? '' : 's'}`, 'text', { text: input.value });
  });
  search.addEventListener('input', renderTree);
  doctorSection(lease);
  // The live view follows the chosen lease; it starts when asked (it costs the device an encoder).
  const live = liveViewOnPage(lease, document.getElementById('run-doctor') ?? undefined);
  select.addEventListener('change', () => {
    if (!live.running) return;
    live.stop();
    live.start();
  });
  controls.addEventListener('submit', (e) => {
    e.preventDefault();
    void refresh().catch((err: Error) => status(`snapshot failed: ${err.message}`));
  });
  document.getElementById('download-xml')!.addEventListener('click', async () => {
    try {
      const r = await api<SnapshotXmlResponse>('POST', `/v1/leases/${encodeURIComponent(lease())}/snapshot`, {
        format: 'xml',
      });
      const a = el('a', {
        href: URL.createObjectURL(new Blob([r.xml], { type: 'application/xml' })),
        download: `snapshot-${lease()}.xml`,
      });
      document.body.append(a);
      a.click();
      a.remove();
    } catch (err) {
      status(`download failed: ${(err as Error).message}`);
    }
  });

  void (async () => {
    const { leases } = await api<LeaseList>('GET', '/v1/leases');
    const active = leases.filter((l) => l.state === 'active');
    select.replaceChildren(...active.map((l) => el('option', { value: l.id }, `${l.id} (${l.deviceId})`)));
    const wanted = new URLSearchParams(location.search).get('lease');
    if (wanted && active.some((l) => l.id === wanted)) select.value = wanted;
    if (active.length === 0) status('no active lease: acquire one on the Leases page');
  })().catch((err: Error) => status(err.message));
}
