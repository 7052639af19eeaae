// Identifiers. Resource ids are UUIDv7 (time-ordered, so they double as pagination cursors and
// LMDB keys sort newest last); secrets come from the CSPRNG.
import { randomBytes } from 'node:crypto';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A canonical lowercase UUIDv7; Bun's generator is monotonic within the process. */
export function newId(): string {
  return Bun.randomUUIDv7();
}

/** The creation time (ms) a UUIDv7 carries in its first 48 bits (RFC 9562 §5.7). */
export function uuidTime(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

/** The smallest UUIDv7 text of time `ms`: every id made at `ms` or later sorts at or after it. */
export function uuidFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/**
 * The smallest UUIDv7 of time `ms` (RFC 9562 §5.7: version 7, variant 10, every random bit zero):
 * the id of something derived rather than stored, placed in time among ids that were made — it
 * sorts before every id made in that millisecond and after every id made before it.
 */
export function uuidAt(ms: number): string {
  return `${uuidFloor(ms)}-7000-8000-000000000000`;
}

/** The last timestamp `uuidAtIso` was asked about, and its answer: the emails of one commit share one. */
let atIso = '';
let atId = '';

/** `uuidAt` of an ISO 8601 timestamp (nowIso's): the emails accepted in one millisecond ask for the same one. */
export function uuidAtIso(iso: string): string {
  if (iso !== atIso) {
    atId = uuidAt(Date.parse(iso));
    atIso = iso;
  }
  return atId;
}

export function isUuid(text: unknown): boolean {
  return typeof text === 'string' && UUID_RE.test(text.toLowerCase());
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform random alphanumerics (rejection sampling: no modulo bias). */
export function randomAlnum(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALNUM[b % 62];
    }
  }
  return out;
}

export function sha256hex(text: string): string {
  // Bun's one-shot hash: a quarter of the cost of a node:crypto Hash object (every API request hashes its key).
  return Bun.SHA256.hash(text, 'hex');
}

/** The last timestamp made, and its millisecond: an accepted email asks for the time several times in one. */
let isoMs = NaN;
let isoText = '';

/** Timestamps: ISO 8601 UTC with milliseconds (docs/api.md §1.7). */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}
