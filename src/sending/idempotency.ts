// Idempotency keys of sends (docs/api.md §5), for both ways in: the HTTP `Idempotency-Key` header on
// POST /emails and /emails/batch, and the SMTP `Resend-Idempotency-Key` header field. Scoped per
// team and endpoint, 24 h, replaying the original status and body; 409 on a different body or
// while the first request is still running. The outcome is written in the same unit of work as
// the emails it created; 4xx outcomes are stored on their own; 5xx and earlier rejections are not.
// Across the nodes of a cluster the key holds through the database's unique key (store/pg/idempotency.ts):
// of two requests with one key on two nodes at once, one commits and the other replays its answer.
import { createHash } from 'node:crypto';
import { IdempotencyKeyTaken, type IdempotencyRecord, type Store, type Tx } from '../store';
import { ApiError } from '../errors';
import { StreamedBase64 } from '../schemas/streamed-base64';

/** A key as given in `header` (1–256 characters), or null; throws 400 invalid_idempotency_key. */
export function checkIdempotencyKey(value: string | null, header: string): string | null {
  if (value === null) return null;
  if (value.length < 1 || value.length > 256)
    throw new ApiError(400, 'invalid_idempotency_key', `The \`${header}\` header must be between 1 and 256 characters.`);
  return value;
}

/** Hash of the parsed body with keys sorted: whitespace and key order do not matter. */
export function fingerprint(value: unknown): string {
  const decoded: StreamedBase64[] = [];
  const text = canonical(value, decoded);
  const hash = createHash('sha256');
  if (!decoded.length) return hash.update(text).digest('hex');
  // A content decoded as its body arrived stands in the text as a NUL (JSON.stringify escapes
  // any other): hashed as the string it was, piece by piece, never whole.
  text.split('\u0000').forEach((part, i) => {
    hash.update(part);
    if (i >= decoded.length) return;
    hash.update('"');
    for (const piece of decoded[i]!.text()) hash.update(piece);
    hash.update('"');
  });
  return hash.digest('hex');
}

function canonical(v: unknown, decoded: StreamedBase64[]): string {
  if (v instanceof StreamedBase64) {
    decoded.push(v);
    return '\u0000';
  }
  if (Array.isArray(v)) {
    // An array of plain values (a Buffer attachment's millions of bytes, docs/api.md §2 item 16)
    // reads the same through JSON.stringify, without a string per element.
    if (v.every((x) => x === null || typeof x !== 'object')) return JSON.stringify(v);
    return `[${v.map((x) => canonical(x, decoded)).join(',')}]`;
  }
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k], decoded)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export interface Outcome {
  status: number;
  body: unknown;
}

export interface IdempotencyScope {
  team: string;
  /** `/emails`, `/emails/batch` or `smtp`: the same key means different requests on each. */
  endpoint: string;
  key: string | null;
  /** The request body's fingerprint; computed only when there is a key. */
  fingerprint: () => string;
}

/** Stores an outcome inside the unit of work that commits the request's effects. */
export type Remember = (tx: Tx, o: Outcome) => void;

/** 409: a request with the same key is still running. */
const stillRunning = () =>
  new ApiError(409, 'concurrent_idempotent_requests', 'Same idempotency key used while original request is still in progress. Try the request again later.');

/** The stored outcome of the first request with a key, for a request with the same body (409 otherwise). */
function replay(stored: IdempotencyRecord | undefined, print: string): Outcome {
  // Stored a moment ago and gone already: only its expiry can do that; the first request is over.
  if (!stored) throw stillRunning();
  if (stored.fingerprint !== print)
    throw new ApiError(
      409,
      'invalid_idempotent_request',
      'Same idempotency key used with a different request payload. Change your idempotency key or try again with the same payload.',
    );
  return { status: stored.status, body: stored.body };
}

/**
 * Sends under idempotency keys: their records in the store, and the keys of the requests still
 * running in this process. One instance for both ways in, made by the composition root
 * (services.ts).
 */
export class Idempotency {
  /** (team, endpoint, key) of the requests under way here. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly store: Store) {}

  /**
   * Run `work` at most once per (team, endpoint, key). `work` receives `remember` (undefined
   * without a key), to be called inside the unit of work that commits its effects with the
   * outcome to store.
   */
  async run(scope: IdempotencyScope, work: (remember: Remember | undefined) => Promise<Outcome>): Promise<Outcome> {
    const { team, endpoint, key } = scope;
    if (key === null) return work(undefined);
    const { store, inFlight } = this;
    const slot = `${team}\u0000${endpoint}\u0000${key}`;
    const print = scope.fingerprint();
    if (inFlight.has(slot)) throw stillRunning();
    const stored = await store.idempotency.get(team, endpoint, key);
    if (stored) return replay(stored, print);
    if (inFlight.has(slot)) throw stillRunning();
    inFlight.add(slot);
    const record = (o: Outcome) => ({ fingerprint: print, status: o.status, body: o.body, created_at: Date.now() });
    try {
      return await work((tx, o) => tx.idempotency.put(team, endpoint, key, record(o)));
    } catch (e) {
      // Another node stored the key first (cluster mode: the same key sent to two nodes at once).
      // Nothing of this request was kept: answer as a request arriving after that one would.
      if (e instanceof IdempotencyKeyTaken) return replay(await store.idempotency.get(team, endpoint, key), print);
      if (e instanceof ApiError && e.statusCode >= 400 && e.statusCode < 500) {
        const o = { status: e.statusCode, body: e.toJSON() };
        await store
          .write(async (tx) => tx.idempotency.put(team, endpoint, key, record(o)))
          .catch((err) => {
            if (!(err instanceof IdempotencyKeyTaken)) throw err;
          });
      }
      throw e;
    } finally {
      inFlight.delete(slot);
    }
  }
}
