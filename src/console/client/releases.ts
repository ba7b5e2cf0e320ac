/** Releases: helpers and versions, the manifest as served (copy button), admin upload with progress. */
import { api, el, status, upload } from './api.ts';

interface Helper {
  name: string;
  latest: string | null;
  versions: string[];
}

export function releasesPage(): void {
  const tbody = document.querySelector<HTMLTableSectionElement>('#helpers tbody')!;
  const manifest = document.getElementById('manifest')!;
  const copy = document.getElementById('copy-manifest') as HTMLButtonElement;

  const show = async (name: string, version?: string) => {
    const path = version
      ? `/v1/helpers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}/manifest`
      : `/v1/helpers/${encodeURIComponent(name)}/manifest`;
    manifest.textContent = JSON.stringify(await api('GET', path), null, 2);
    copy.disabled = false;
  };
  const refresh = async () => {
    const { helpers } = await api<{ helpers: Helper[] }>('GET', '/v1/helpers');
    tbody.replaceChildren(
      ...helpers.map((h) => {
        const view = el('button', { type: 'button', 'aria-label': `Show the manifest of ${h.name}` }, 'Show');
        view.addEventListener('click', () => void show(h.name).catch((e: Error) => status(e.message)));
        return el(
          'tr',
          {},
          el('td', {}, h.name),
          el('td', {}, h.latest ?? '—'),
          el('td', {}, h.versions.join(', ')),
          el('td', {}, view),
        );
      }),
    );
  };
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(manifest.textContent ?? '');
      status('manifest copied');
    } catch {
      const range = document.createRange();
      range.selectNodeContents(manifest);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      status('clipboard unavailable: the manifest is selected, copy it with Ctrl+C');
    }
  });
  const form = document.getElementById('publish') as HTMLFormElement | null;
  form?.addEventListener('submit', async (e) => {
    e.preventDefault();
    const error = document.getElementById('publish-error')!;
    const progress = document.getElementById('publish-progress') as HTMLProgressElement;
    error.textContent = '';
    const data = new FormData(form);
    const name = String(data.get('name') ?? '');
    const body = new FormData();
    body.set('version', String(data.get('version') ?? ''));
    const file = data.get('apk');
    if (!(file instanceof File) || file.size === 0) {
      error.textContent = 'choose an APK or dex jar';
      return;
    }
    body.set('apk', file);
    try {
      const r = await upload<{ status: string; manifest: { version: string } }>(
        `/v1/helpers/${encodeURIComponent(name)}/releases`,
        body,
        (f) => {
          progress.value = Math.round(f * 100);
        },
      );
      progress.value = 100;
      status(`${name} ${r.manifest.version}: ${r.status}`);
      await refresh();
      await show(name, r.manifest.version);
    } catch (err) {
      error.textContent = (err as Error).message;
    }
  });
  void refresh().catch((e: Error) => status(e.message));
}
