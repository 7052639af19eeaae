// The dashboard's only way to the server: the same REST API the SDKs call, authenticated by the
// session cookie plus its CSRF token in a header (docs/api.md §19.2).
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrf: string | null = null;
let onSignedOut: () => void = () => {};

export function setCsrf(token: string | null): void {
  csrf = token;
}

export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

const ENDED = new Set(['session_expired', 'missing_csrf_token', 'not_signed_in']);

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (csrf) headers['x-csrf-token'] = csrf;
  // A form (an upload) goes as multipart/form-data, its boundary set by the browser.
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : form ? body : JSON.stringify(body) });
  } catch {
    throw new ApiFailure(0, 'network_error', 'Posthorn cannot be reached. Check your connection and try again.');
  }
  const type = res.headers.get('content-type') ?? '';
  const payload = type.includes('json') ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) {
    const code = payload?.name ?? 'error';
    if (res.status === 401 && ENDED.has(code) && !path.startsWith('/auth/sign-in')) onSignedOut();
    throw new ApiFailure(res.status, code, payload?.message ?? `The request failed (${res.status}).`);
  }
  return payload as T;
}

export const get = <T = unknown>(path: string) => api<T>('GET', path);
export const post = <T = unknown>(path: string, body: unknown = {}) => api<T>('POST', path, body);
export const patch = <T = unknown>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = <T = unknown>(path: string, body?: unknown) => api<T>('DELETE', path, body);

/** A query string from the set values of `params`. */
export function qs(params: Record<string, string | number | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

export interface List<T> {
  object: 'list';
  has_more: boolean;
  data: T[];
}
