/**
 * The inspector's doctor: "Run doctor" runs POST /v1/leases/{id}/doctor for the selected lease and
 * shows the report, one row per check (result, time, what was seen, and for a known failure what
 * to do), the device it ran on, and a download of the JSON report to send back.
 */
import type { DoctorReport } from '../../api/doctor.ts';
import { api, el, status } from './api.ts';

const RESULT = { pass: 'passed', fail: 'failed', skip: 'skipped' } as const;

export function doctorSection(lease: () => string): void {
  const button = document.getElementById('run-doctor') as HTMLButtonElement | null;
  if (button === null) return;
  const table = document.getElementById('doctor-report') as HTMLTableElement;
  const body = table.querySelector('tbody') as HTMLTableSectionElement;
  const summary = document.getElementById('doctor-summary') as HTMLElement;
  const download = document.getElementById('doctor-download') as HTMLAnchorElement;
  let objectUrl: string | null = null;

  const show = (report: DoctorReport) => {
    const d = report.device;
    const { pass, fail, skip } = report.summary;
    summary.textContent = `${fail === 0 ? 'All checks passed' : `${fail} failed`}: ${pass} passed, ${fail} failed, ${skip} skipped in ${report.elapsedMs} ms on ${d.manufacturer ?? '?'} ${d.model ?? '?'} (Android ${d.release ?? '?'}, API ${d.sdk ?? '?'}).`;
    body.replaceChildren(
      ...report.checks.map((c) =>
        el(
          'tr',
          { 'data-check': c.id, class: `doctor-${c.status}` },
          el('th', { scope: 'row' }, c.title),
          el('td', {}, RESULT[c.status]),
          el('td', {}, `${c.elapsedMs} ms`),
          el(
            'td',
            {},
            c.detail,
            c.fix ? el('p', { class: 'fix' }, el('strong', {}, 'What to do: '), c.fix) : null,
          ),
        ),
      ),
    );
    table.hidden = false;
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = URL.createObjectURL(
      new Blob([`${JSON.stringify(report, null, 2)}\n`], { type: 'application/json' }),
    );
    download.href = objectUrl;
    download.download = `doctor-${report.deviceId}.json`;
    download.hidden = false;
  };

  button.addEventListener('click', async () => {
    if (!lease()) {
      status('acquire a lease first (Leases page)');
      return;
    }
    button.disabled = true;
    summary.textContent = 'Running the doctor…';
    try {
      show(await api<DoctorReport>('POST', `/v1/leases/${encodeURIComponent(lease())}/doctor`, {}));
    } catch (err) {
      summary.textContent = `The doctor could not run: ${(err as Error).message}`;
    } finally {
      button.disabled = false;
    }
  });
}
