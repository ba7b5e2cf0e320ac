/**
 * Releases: every published version of every helper with what its served manifest says (sha256,
 * signer, installArgs; the latest marked), the manifest as served (copy button), admin upload with
 * progress.
 */
import type { HelperListResponse, PublishResult, ReleaseManifestBody } from '../../api/release-manifests.ts';
import { api, el, status, upload } from './api.ts';

/** Versions shown per helper (the newest); older ones stay reachable through the API. */
const VERSIONS_SHOWN = 20;

const manifestPath = (name: string, version: string) =>
  `/v1/helpers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}/manifest`;

/** An APK release's manifest (a dex jar for app_process is pushed: no versionCode, signer, installArgs). */
const apk = (m: ReleaseManifestBody | null) => (m === null || m.kind === 'app-process-jar' ? null : m);

/** A 64-hex digest in full (it wraps anywhere), or `none` (an unsigned or unpinned release). */
const digest = (hex: string | undefined) =>
  hex ? el('code', { class: 'digest' }, hex) : el('span', { class: 'muted' }, 'none');

export function releasesPage(): void {
  const tbody = document.querySelector<HTMLTableSectionElement>('#helpers tbody')!;
  const manifest = document.getElementById('manifest')!;
  const copy = document.getElementById('copy-manifest') as HTMLButtonElement;

  const show = async (name: string, version?: string) => {
    const path = version ? manifestPath(name, version) : `/v1/helpers/${encodeURIComponent(name)}/manifest`;
    manifest.textContent = JSON.stringify(await api('GET', path), null, 2);
    copy.disabled = false;
  };
  const refresh = async () => {
    const { helpers } = await api<HelperListResponse>('GET', '/v1/helpers');
    const rows = await Promise.all(
      helpers.flatMap((h) =>
        [...h.versions]
          .reverse()
          .slice(0, VERSIONS_SHOWN)
          .map(async (version) => {
            let m: ReleaseManifestBody | null = null;
            try {
              m = await api<ReleaseManifestBody>('GET', manifestPath(h.name, version));
            } catch (err) {
              status(`manifest of ${h.name} ${version}: ${(err as Error).message}`);
            }
            const view = el(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Show the manifest of ${h.name} ${version}`,
              },
              'Show',
            );
            view.addEventListener(
              'click',
              () => void show(h.name, version).catch((e: Error) => status(e.message)),
            );
            return el(
              'tr',
              { 'data-helper': h.name, 'data-version': version },
              el('td', {}, h.name),
              el('td', {}, version, version === h.latest ? el('span', { class: 'tag' }, 'latest') : null),
              el('td', {}, String(apk(m)?.versionCode ?? '')),
              el('td', { class: 'sha256' }, digest(m?.sha256)),
              el('td', { class: 'signer' }, digest(apk(m)?.signingCertSha256)),
              el('td', { class: 'install-args' }, el('code', {}, (apk(m)?.installArgs ?? []).join(' '))),
              el('td', {}, view),
            );
          }),
      ),
    );
    tbody.replaceChildren(...rows);
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
      const r = await upload<PublishResult>(`/v1/helpers/${encodeURIComponent(name)}/releases`, body, (f) => {
        progress.value = Math.round(f * 100);
      });
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
