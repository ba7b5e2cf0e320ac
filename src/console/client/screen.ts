/**
 * The Screen page (`/console/screen?lease=ID`): a lease's live screen (./live-screen.ts), started at
 * once; choosing another lease moves the view to it.
 */
import type { LeaseList } from '../../api/leases.ts';
import { api, el, status } from './api.ts';
import { type LiveView, liveView } from './live-screen.ts';

/** The live view's elements, as the page's liveSection renders them. */
export function liveViewOnPage(lease: () => string, leaveTo?: HTMLElement): LiveView {
  return liveView(
    {
      canvas: document.getElementById('live-canvas') as HTMLCanvasElement,
      status: document.getElementById('live-status')!,
      stats: document.getElementById('live-stats')!,
      toggle: document.getElementById('live-toggle') as HTMLButtonElement,
      ...(leaveTo === undefined ? {} : { leaveTo }),
    },
    lease,
  );
}

export function screenPage(): void {
  const select = document.getElementById('lease-select') as HTMLSelectElement;
  const view = liveViewOnPage(() => select.value);
  select.addEventListener('change', () => {
    view.stop();
    view.start();
  });
  void (async () => {
    const { leases } = await api<LeaseList>('GET', '/v1/leases');
    const active = leases.filter((l) => l.state === 'active');
    select.replaceChildren(...active.map((l) => el('option', { value: l.id }, `${l.id} (${l.deviceId})`)));
    const wanted = new URLSearchParams(location.search).get('lease');
    if (wanted && active.some((l) => l.id === wanted)) select.value = wanted;
    if (active.length === 0) {
      status('no active lease: acquire one on the Leases page');
      return;
    }
    view.start();
  })().catch((err: Error) => status(err.message));
}
