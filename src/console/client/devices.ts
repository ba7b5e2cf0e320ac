/**
 * Devices: the live table (polled every 2 s, no reloads), filters by label and state; for admins the
 * lease holder's tenant and the admin actions.
 */
import type { Device, DeviceList } from '../../api/devices.ts';
import type { LeaseList } from '../../api/leases.ts';
import { type ApiError, api, el, isAdmin, status } from './api.ts';

export function devicesPage(): void {
  const tbody = document.querySelector<HTMLTableSectionElement>('#devices tbody')!;
  const filters = document.getElementById('device-filters') as HTMLFormElement;
  let devices: Device[] = [];
  let tenants = new Map<string, string>();

  const render = () => {
    const label = (filters.elements.namedItem('label') as HTMLInputElement).value.trim();
    const state = (filters.elements.namedItem('state') as HTMLSelectElement).value;
    const [lk, lv] = label.split('=');
    const shown = devices.filter(
      (d) =>
        (state === '' || d.state === state) &&
        (label === '' ||
          Object.entries(d.labels).some(
            ([k, v]) => k === lk?.trim() && (lv === undefined || v === lv.trim()),
          )),
    );
    tbody.replaceChildren(
      ...shown.map((d) =>
        el(
          'tr',
          { 'data-device': d.id },
          el('td', {}, d.id),
          el('td', {}, d.properties.model ?? ''),
          el('td', {}, String(d.properties.sdk ?? '')),
          el(
            'td',
            {},
            Object.entries(d.labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(', '),
          ),
          el(
            'td',
            { class: `state-${d.state}` },
            d.state,
            d.quarantineReason ? ` (${d.quarantineReason})` : '',
          ),
          el('td', {}, d.ownerNode),
          el('td', {}, holder(d)),
          el(
            'td',
            {},
            Object.entries(d.helpers)
              // The installed release's semver (older records know only its versionCode).
              .map(([n, h]) => `${n} ${h.version ?? '?'} (code ${h.versionCode})`)
              .join(', '),
          ),
          isAdmin() ? el('td', {}, ...adminActions(d)) : null,
        ),
      ),
    );
  };

  /** The lease column: the lease id (its tenant's and admins' view), and for admins its tenant. */
  const holder = (d: Device): string => {
    if (d.leaseId === null) return d.leased ? 'leased' : 'free';
    const tenant = tenants.get(d.leaseId);
    return tenant === undefined ? d.leaseId : `${d.leaseId} (tenant ${tenant})`;
  };

  const adminActions = (d: Device): HTMLElement[] => {
    const remove = el(
      'button',
      { type: 'button', class: 'secondary', 'aria-label': `Remove ${d.id}` },
      'Remove',
    );
    remove.addEventListener('click', () =>
      act('DELETE', `/v1/devices/${encodeURIComponent(d.id)}`, `removed ${d.id}`),
    );
    const baseline = el(
      'button',
      { type: 'button', class: 'secondary', 'aria-label': `Record baseline of ${d.id}` },
      'Record baseline',
    );
    baseline.addEventListener('click', () =>
      act('POST', `/v1/devices/${encodeURIComponent(d.id)}/baseline`, `baseline of ${d.id} recorded`),
    );
    if (d.state !== 'quarantined') return [baseline, remove];
    const clear = el(
      'button',
      { type: 'button', 'aria-label': `Clear quarantine of ${d.id}` },
      'Clear quarantine',
    );
    clear.addEventListener('click', () =>
      act('POST', `/v1/devices/${encodeURIComponent(d.id)}/clear-quarantine`, `cleared ${d.id}`),
    );
    return [clear, baseline, remove];
  };

  const act = async (method: string, path: string, done: string) => {
    try {
      await api(method, path);
      status(done);
      await refresh();
    } catch (err) {
      status(`${(err as ApiError).code ?? 'ERROR'}: ${(err as Error).message}`);
    }
  };

  const refresh = async () => {
    try {
      devices = (await api<DeviceList>('GET', '/v1/devices')).devices;
      if (isAdmin()) {
        // Admins see every tenant's leases: name the holder's tenant next to the lease.
        const { leases } = await api<LeaseList>('GET', '/v1/leases');
        tenants = new Map(leases.map((l) => [l.id, l.tenant]));
      }
      render();
    } catch (err) {
      status(`could not list devices: ${(err as Error).message}`);
    }
  };

  filters.addEventListener('input', render);
  filters.addEventListener('submit', (e) => e.preventDefault());
  const register = document.getElementById('register-device') as HTMLFormElement | null;
  register?.addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = register.elements.namedItem('endpoint') as HTMLInputElement;
    const error = document.getElementById('register-error')!;
    error.textContent = '';
    input.removeAttribute('aria-invalid');
    try {
      await api('POST', '/v1/devices', { endpoint: input.value.trim() });
      status(`registered ${input.value}`);
      input.value = '';
      await refresh();
    } catch (err) {
      error.textContent = (err as Error).message;
      input.setAttribute('aria-invalid', 'true');
    }
  });
  void refresh();
  setInterval(refresh, 2000);
}
