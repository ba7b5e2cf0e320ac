/**
 * The Leases page's "Waiting" table: lease requests queued for a device (`GET /v1/waiters`, the
 * caller's tenant; admins: all, with a tenant column), one row group per selector in queue order,
 * the time waited counting up between refreshes, and an empty state.
 */

import type { Waiter } from '../../api/leases.ts';
import { queueKeyFor } from '../../leases/queue-key.ts';
import { el, isAdmin } from './api.ts';
import { describeSelector, waited } from './waiting-format.ts';

export function waitersTable(table: HTMLTableElement): { show(waiters: Waiter[]): void; tick(): void } {
  const admin = isAdmin();
  const columns = admin ? 5 : 4;
  const tick = () => {
    for (const td of table.querySelectorAll<HTMLElement>('td.waiting')) {
      td.textContent = waited(Date.now() - Number(td.dataset['since']));
    }
  };
  const show = (waiters: Waiter[]) => {
    const now = Date.now();
    // The API lists by queue, then place; group in that order, each group by its place.
    const groups = new Map<string, Waiter[]>();
    for (const w of waiters) {
      const key = queueKeyFor(w.selector);
      groups.set(key, [...(groups.get(key) ?? []), w]);
    }
    const bodies = [...groups].map(([key, queue]) =>
      el(
        'tbody',
        { 'data-queue': key },
        el(
          'tr',
          { class: 'group' },
          el(
            'th',
            { scope: 'rowgroup', colspan: String(columns) },
            `${describeSelector(queue[0]!.selector)} — ${queue.length} waiting`,
          ),
        ),
        ...queue
          .sort((a, b) => a.position - b.position)
          .map((w) =>
            el(
              'tr',
              { 'data-waiter': w.waiterId },
              el('td', { class: 'position' }, String(w.position)),
              el('td', { class: 'waiting', 'data-since': String(now - w.waitingMs) }, waited(w.waitingMs)),
              el('td', { class: 'node' }, w.node),
              admin ? el('td', { class: 'tenant' }, w.tenant) : null,
              el('td', { class: 'waiter-id' }, w.waiterId),
            ),
          ),
      ),
    );
    const empty = el(
      'tbody',
      { class: 'empty' },
      el('tr', {}, el('td', { colspan: String(columns) }, 'Nobody is waiting for a device.')),
    );
    for (const old of table.querySelectorAll('tbody')) old.remove();
    table.append(...(bodies.length === 0 ? [empty] : bodies));
  };
  return { show, tick };
}
