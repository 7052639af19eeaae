// Idempotency keys on POST /emails and /emails/batch (api-reference §5): scoped per team and
// endpoint, 24 h, replaying the original status and body; 409 on a different body or while the
// first request is still running. The outcome is written in the same transaction as the emails it
// created; 4xx outcomes are stored on their own; 5xx and earlier rejections are not stored.
import { createHash } from 'node:crypto';
import type { Services } from '../../services';
import { ApiError } from '../errors';

export const IDEMPOTENT_ROUTES = new Set(['POST /emails', 'POST /emails/batch']);

/** The request's key, or null; throws 400 invalid_idempotency_key when malformed. */
export function idempotencyKey(headers: Headers): string | null {
  const key = headers.get('idempotency-key');
  if (key === null) return null;
  if (key.length < 1 || key.length > 256)
    throw new ApiError(400, 'invalid_idempotency_key', 'The `Idempotency-Key` header must be between 1 and 256 characters.');
  return key;
}

/** Hash of the parsed body with keys sorted: whitespace and key order do not matter. */
export function fingerprint(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('hex');
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export interface Outcome {
  status: number;
  body: unknown;
}

const inFlight = new Set<string>();

/**
 * Run `work` at most once per (team, endpoint, key). `work` receives `remember`, to be called
 * inside the transaction that commits its effects, with the outcome to store.
 */
export async function withIdempotency(
  svc: Services,
  scope: { team: string; endpoint: string; key: string | null; fingerprint: string },
  work: (remember: ((o: Outcome) => void) | undefined) => Promise<Outcome>,
): Promise<Outcome> {
  const { team, endpoint, key } = scope;
  if (key === null) return work(undefined);
  const slot = `${team}\u0000${endpoint}\u0000${key}`;
  const replay = () => {
    const stored = svc.store.idempotency.get(team, endpoint, key);
    if (!stored) return null;
    if (stored.fingerprint !== scope.fingerprint)
      throw new ApiError(409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload. Change your idempotency key or try again with the same payload.');
    return { status: stored.status, body: stored.body };
  };
  if (inFlight.has(slot))
    throw new ApiError(409, 'concurrent_idempotent_requests', 'Same idempotency key used while original request is still in progress. Try the request again later.');
  const earlier = replay();
  if (earlier) return earlier;
  inFlight.add(slot);
  const record = (o: Outcome) => ({ fingerprint: scope.fingerprint, status: o.status, body: o.body, created_at: Date.now() });
  try {
    return await work((o) => svc.store.idempotency.putInTxn(team, endpoint, key, record(o)));
  } catch (e) {
    if (e instanceof ApiError && e.statusCode >= 400 && e.statusCode < 500) {
      const o = { status: e.statusCode, body: e.toJSON() };
      await svc.store.transaction(() => svc.store.idempotency.putInTxn(team, endpoint, key, record(o)));
    }
    throw e;
  } finally {
    inFlight.delete(slot);
  }
}
