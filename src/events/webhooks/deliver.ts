// One delivery attempt (docs/api.md §14.4): POST the event's envelope, signed afresh with this
// attempt's timestamp, through the SSRF guard (the endpoint's host is vetted again every time —
// it may re-resolve), no redirects followed, 15 s for the whole exchange. Any 2xx is a success.
import type { WebhookEventRec, WebhookRec } from '../../store';
import { safeFetch, GuardError } from '../../net/guard';
import { signedHeaders } from './signing';

export const ATTEMPT_TIMEOUT_MS = 15_000;
/** How much of a response body the attempt log keeps. */
export const RESPONSE_EXCERPT_BYTES = 2048;

export interface AttemptOutcome {
  ok: boolean;
  sent_at: string;
  duration_ms: number;
  http_status_code: number | null;
  /** Body excerpt, or a short error text when there was no answer. */
  response: string;
  error: string | null;
}

/** The secrets that sign now: the current one, and the previous one within 24 h of a rotation. */
export function liveSecrets(w: WebhookRec, now: number): string[] {
  const previous = w.previous_secret && w.previous_secret_expires_at && Date.parse(w.previous_secret_expires_at) > now ? [w.previous_secret] : [];
  return [w.signing_secret, ...previous];
}

export async function deliver(w: WebhookRec, ev: WebhookEventRec, opts: { allowPrivate: boolean; timeoutMs?: number }): Promise<AttemptOutcome> {
  const started = Date.now();
  const body = JSON.stringify(ev.payload);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Posthorn-Webhooks',
    ...signedHeaders(liveSecrets(w, started), ev.id, Math.floor(started / 1000), body),
  };
  const sent_at = new Date(started).toISOString();
  try {
    const res = await safeFetch(w.endpoint, {
      method: 'POST',
      headers,
      body,
      allowPrivate: opts.allowPrivate,
      timeoutMs: opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
      maxBytes: RESPONSE_EXCERPT_BYTES,
      truncate: true,
      maxRedirects: 0,
    });
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      sent_at,
      duration_ms: Date.now() - started,
      http_status_code: res.status,
      response: new TextDecoder().decode(res.bytes),
      error: ok ? null : res.status >= 300 && res.status < 400 ? 'redirect not followed' : `HTTP ${res.status}`,
    };
  } catch (e) {
    const error = e instanceof GuardError ? e : new GuardError('network', String(e));
    return {
      ok: false,
      sent_at,
      duration_ms: Date.now() - started,
      http_status_code: null,
      response: shortError(error),
      error: `${error.code}: ${error.message}`,
    };
  }
}

/** `timeout`, `connection refused`, … for the attempt log's `response`. */
function shortError(e: GuardError): string {
  switch (e.code) {
    case 'timeout':
      return 'timeout';
    case 'forbidden_address':
      return 'refused: private or loopback address';
    case 'unresolvable':
      return 'host not found';
    case 'invalid_url':
      return 'invalid endpoint URL';
    default:
      if (/ECONNREFUSED/.test(e.message)) return 'connection refused';
      if (/ECONNRESET|socket hang up|closed/i.test(e.message)) return 'connection reset';
      if (/certificate|TLS|SSL/i.test(e.message)) return 'TLS error';
      return 'connection failed';
  }
}
