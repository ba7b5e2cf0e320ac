/**
 * Leases: acquire (selector form), the active leases with TTL countdown, renew, release, teardown;
 * the waiters queued per selector (./waiters.ts); a lease's adb endpoint (the form is on the page
 * only for a token with the `adb` capability).
 */
import type { AdbEndpoint } from '../../api/adb-endpoint-result.ts';
import type { Lease, LeaseList, ReleaseLeaseResponse, TeardownList, WaiterList } from '../../api/leases.ts';
import { api, el, status } from './api.ts';
import { waitersTable } from './waiters.ts';

/** Most ended leases the history table shows. */
const HISTORY = 20;

const list = (items: string[]) =>
  items.length === 0 ? 'none' : el('ul', { class: 'plain' }, ...items.map((i) => el('li', {}, i)));

export function leasesPage(): void {
  const history = document.querySelector<HTMLTableSectionElement>('#teardowns tbody')!;
  const tbody = document.querySelector<HTMLTableSectionElement>('#leases tbody')!;
  const form = document.getElementById('acquire') as HTMLFormElement;
  const error = document.getElementById('acquire-error')!;
  const teardown = document.getElementById('teardown')!;
  const waiters = waitersTable(document.getElementById('waiters') as HTMLTableElement);
  const adb = adbEndpointForm();
  let leases: Lease[] = [];

  const left = (l: Lease) => Math.max(0, Math.round((l.expiresAt - Date.now()) / 1000));
  const render = () => {
    adb?.show(leases);
    tbody.replaceChildren(
      ...leases.map((l) => {
        const renew = el('button', { type: 'button', 'aria-label': `Renew ${l.id}` }, 'Renew');
        renew.addEventListener('click', async () => {
          await api('POST', `/v1/leases/${l.id}/renew`, {}).catch((e: Error) => status(e.message));
          await refresh();
        });
        const release = el(
          'button',
          { type: 'button', class: 'secondary', 'aria-label': `Release ${l.id}` },
          'Release',
        );
        release.addEventListener('click', async () => {
          try {
            const r = await api<ReleaseLeaseResponse>('DELETE', `/v1/leases/${l.id}`);
            // Still running when the release answered: its record follows in the history below.
            teardown.textContent = JSON.stringify(
              r.teardown ?? { teardownPending: r.teardownPending },
              null,
              2,
            );
            status(`released ${l.id}`);
          } catch (e) {
            status((e as Error).message);
          }
          await refresh();
        });
        return el(
          'tr',
          { 'data-lease': l.id },
          el('td', {}, l.id),
          el('td', {}, l.deviceId),
          el('td', {}, l.tenant),
          el('td', {}, String(l.fencingToken)),
          el('td', { class: 'ttl', 'data-expires': String(l.expiresAt) }, `${left(l)} s`),
          el(
            'td',
            {},
            renew,
            ' ',
            release,
            ' ',
            el('a', { href: `/console/inspector?lease=${encodeURIComponent(l.id)}` }, 'Inspect'),
            ' ',
            el(
              'a',
              {
                href: `/console/screen?lease=${encodeURIComponent(l.id)}`,
                'aria-label': `Live screen of ${l.id}`,
              },
              'Screen',
            ),
          ),
        );
      }),
    );
  };
  // The queues move faster than leases end: polled on their own, every 2 s.
  const refreshWaiters = async () => waiters.show((await api<WaiterList>('GET', '/v1/waiters')).waiters);
  const refresh = async () => {
    const [active, ended] = await Promise.all([
      api<LeaseList>('GET', '/v1/leases'),
      api<TeardownList>('GET', `/v1/teardowns?limit=${HISTORY}`),
    ]);
    leases = active.leases.filter((l) => l.state === 'active');
    render();
    history.replaceChildren(
      ...ended.teardowns.map(({ lease, teardown }) =>
        el(
          'tr',
          { 'data-lease': lease.id },
          el('td', {}, lease.id),
          el('td', {}, lease.deviceId),
          el('td', {}, lease.tenant),
          el('td', {}, teardown.reason),
          el('td', {}, new Date(teardown.finishedAt).toLocaleString()),
          el('td', {}, teardown.node),
          el('td', {}, list(teardown.actions)),
          el(
            'td',
            { class: teardown.failures.length > 0 ? 'state-quarantined' : '' },
            list(teardown.failures),
          ),
        ),
      ),
    );
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const labels: Record<string, string> = {};
    for (const pair of value('labels').split(',')) {
      const [k, v] = pair.split('=');
      if (k?.trim() && v !== undefined) labels[k.trim()] = v.trim();
    }
    const selector: Record<string, unknown> = {};
    if (Object.keys(labels).length > 0) selector['labels'] = labels;
    if (value('deviceId')) selector['deviceId'] = value('deviceId');
    if (value('sdkMin')) selector['sdkMin'] = Number(value('sdkMin'));
    try {
      const lease = await api<Lease>('POST', '/v1/leases', {
        selector,
        ...(value('ttlSeconds') ? { ttlSeconds: Number(value('ttlSeconds')) } : {}),
      });
      status(`acquired ${lease.id} on ${lease.deviceId} (fencing token ${lease.fencingToken})`);
      await refresh();
    } catch (err) {
      error.textContent = (err as Error).message;
    }
  });
  setInterval(() => {
    for (const td of tbody.querySelectorAll<HTMLElement>('td.ttl')) {
      td.textContent = `${Math.max(0, Math.round((Number(td.dataset['expires']) - Date.now()) / 1000))} s`;
    }
    waiters.tick();
  }, 1000);
  setInterval(() => void refresh().catch(() => undefined), 5000);
  setInterval(() => void refreshWaiters().catch(() => undefined), 2000);
  void refresh().catch((e: Error) => status(e.message));
  void refreshWaiters().catch(() => undefined);
}

/** The remote adb form: the active leases to choose from, and the endpoint it opened (or the API's refusal). */
function adbEndpointForm(): { show(leases: Lease[]): void } | null {
  const form = document.getElementById('adb-endpoint') as HTMLFormElement | null;
  if (form === null) return null;
  const select = document.getElementById('adb-lease') as HTMLSelectElement;
  const key = document.getElementById('adb-key') as HTMLTextAreaElement;
  const result = document.getElementById('adb-result')!;
  const error = document.getElementById('adb-error')!;
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    result.textContent = '';
    try {
      const opened = await api<AdbEndpoint>('POST', `/v1/leases/${encodeURIComponent(select.value)}/adb`, {
        publicKey: key.value,
      });
      result.textContent = `adb connect ${opened.endpoint}`;
      status(`adb endpoint of ${opened.leaseId}: ${opened.endpoint}`);
    } catch (err) {
      error.textContent = (err as Error).message;
    }
  });
  return {
    show(leases) {
      const chosen = select.value;
      select.replaceChildren(...leases.map((l) => el('option', { value: l.id }, `${l.id} (${l.deviceId})`)));
      if (leases.some((l) => l.id === chosen)) select.value = chosen;
    },
  };
}
