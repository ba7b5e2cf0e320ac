/** The console's calls to the bridge's /v1 API: same origin, the session cookie, the CSRF token. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

const csrf = (): string => document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { 'X-CSRF-Token': csrf(), ...extra };
}

async function failure(res: Response): Promise<ApiError> {
  let body: { error?: { code?: string; message?: string; details?: unknown } } = {};
  try {
    body = await res.json();
  } catch {
    // not JSON
  }
  if (res.status === 401) location.assign('/console/sign-in');
  return new ApiError(
    res.status,
    body.error?.code ?? 'INTERNAL',
    body.error?.message ?? `HTTP ${res.status}`,
    body.error?.details,
  );
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw await failure(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** GET a binary resource (a screenshot) as a Blob. */
export async function blob(path: string): Promise<Blob> {
  const res = await fetch(path, { credentials: 'same-origin' });
  if (!res.ok) throw await failure(res);
  return res.blob();
}

/** Upload multipart form data with progress (XHR: fetch has no upload progress). */
export function upload<T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('X-CSRF-Token', csrf());
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body: { error?: { code?: string; message?: string; details?: unknown } } & T;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        reject(new ApiError(xhr.status, 'INTERNAL', `HTTP ${xhr.status}`, undefined));
        return;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else
        reject(
          new ApiError(
            xhr.status,
            body.error?.code ?? 'INTERNAL',
            body.error?.message ?? `HTTP ${xhr.status}`,
            body.error?.details,
          ),
        );
    };
    xhr.onerror = () => reject(new ApiError(0, 'UNAVAILABLE', 'the bridge did not answer', undefined));
    xhr.send(form);
  });
}

/** Build an element: `el('td', {class: 'x'}, 'text', child)`. Text is always text, never HTML. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Array<Node | string | null | undefined>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

export function status(message: string): void {
  const s = document.getElementById('status');
  if (s) s.textContent = message;
}

export const isAdmin = (): boolean => document.body.dataset['role'] === 'admin';
