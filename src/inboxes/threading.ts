// Which thread a message joins (docs/api.md §25.4). RFC 5322 §3.6.4 first: a reply names
// the message it answers in `In-Reply-To` and its ancestors in `References`, so a message whose
// In-Reply-To or References names a message of the inbox joins that message's thread. Mail without
// those fields (clients that drop them, a customer writing again) joins a thread of the inbox with
// the same normalised subject that shares a participant with it and was active in the last
// SUBJECT_WINDOW_DAYS days; anything else starts a thread. Small pure functions: the decision is
// tested without a store (test/inboxes/threading.test.ts).

/** How long a thread stays open to mail that matches it only by subject and participants. */
export const SUBJECT_WINDOW_DAYS = 14;
const WINDOW_MS = SUBJECT_WINDOW_DAYS * 86_400_000;

/** The msg-ids of an In-Reply-To or References field (RFC 5322 §3.6.4), angle brackets kept, in order. */
export function messageIds(field: string | null | undefined): string[] {
  if (!field) return [];
  return [...field.matchAll(/<[^<>\s]+>/g)].map(([id]) => id);
}

/**
 * The ids to look a message's thread up by, most specific first: In-Reply-To, then References from
 * the newest ancestor back (RFC 5322 §3.6.4: References lists the oldest first).
 */
export function threadKeys(inReplyTo: string | null | undefined, references: string | null | undefined): string[] {
  const out: string[] = [];
  for (const id of [...messageIds(inReplyTo), ...messageIds(references).reverse()]) if (!out.includes(id)) out.push(id);
  return out;
}

/**
 * The References of a reply to `parent` (RFC 5322 §3.6.4): the parent's References (or, without
 * them, its In-Reply-To) followed by the parent's Message-ID.
 */
export function replyReferences(parent: { message_id: string | null; references: string[] }): string[] {
  const refs = [...parent.references];
  if (parent.message_id && !refs.includes(parent.message_id)) refs.push(parent.message_id);
  return refs;
}

// Reply and forward markers of common clients in several languages (Re, Fwd, Fw, AW, WG, SV, VS,
// Antw, Réf, TR, RIF, Odp, ПОВТОР…), with an optional count (`Re[2]:`, `Re(2):`).
const PREFIX = /^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw|ref|réf|tr|rif|odp|r|enc|res)\s*(?:\[\d+\]|\(\d+\))?\s*:\s*)+/iu;
const LIST_TAG = /^\s*\[[^\]]{1,40}\]\s*/u;

/** A subject without reply and forward prefixes or a leading list tag, whitespace folded, lowercase: '' for none. */
export function subjectKey(subject: string | null | undefined): string {
  let s = subject ?? '';
  for (let i = 0; i < 5; i++) {
    const next = s.replace(PREFIX, '').replace(LIST_TAG, '');
    if (next === s) break;
    s = next;
  }
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** The subject of a reply: the original's with one `Re: ` (RFC 5322 §3.6.5). */
export function replySubject(subject: string | null | undefined): string {
  const s = (subject ?? '').trim();
  return /^re\s*:/i.test(s) ? s : `Re: ${s}`;
}

/** The subject of a forward: the original's with one `Fwd: `. */
export function forwardSubject(subject: string | null | undefined): string {
  const s = (subject ?? '').trim();
  return /^fwd?\s*:/i.test(s) ? s : `Fwd: ${s}`;
}

/** A thread as the subject rule reads it. */
export interface SubjectCandidate {
  id: string;
  participants: string[];
  last_at: string;
  folder: string;
}

/**
 * The thread a message without a known parent joins by subject: among the inbox's threads with its
 * subject key, those active within the window (measured from `at`) that share a participant other
 * than the inbox itself, the most recently active; null for none. A message without a subject
 * never joins by subject. Threads in the trash are not joined.
 */
export function bySubject(key: string, participants: string[], inboxAddress: string, at: string, candidates: SubjectCandidate[]): string | null {
  if (!key) return null;
  const mine = new Set(participants.map((p) => p.toLowerCase()).filter((p) => p !== inboxAddress));
  const now = Date.parse(at);
  let best: SubjectCandidate | null = null;
  for (const c of candidates) {
    if (c.folder === 'trash') continue;
    if (now - Date.parse(c.last_at) > WINDOW_MS) continue;
    if (!c.participants.some((p) => mine.has(p))) continue;
    if (!best || c.last_at > best.last_at) best = c;
  }
  return best?.id ?? null;
}

/** Addresses of a message, lowercase, once each (a thread's participants). */
export function participantsOf(m: { from: string; to: string[]; cc: string[]; bcc?: string[]; reply_to?: string[] }): string[] {
  const out = new Set<string>();
  for (const a of [m.from, ...m.to, ...m.cc, ...(m.bcc ?? []), ...(m.reply_to ?? [])]) {
    const bare = bareAddress(a);
    if (bare) out.add(bare);
  }
  return [...out];
}

/** The address of `Name <a@b>` or `a@b`, lowercase ('' when there is none). */
export function bareAddress(a: string): string {
  const m = /<([^<>]+)>\s*$/.exec(a);
  return (m ? m[1]! : a).trim().toLowerCase();
}

/** The first `max` characters of a message's text, whitespace folded (a thread's and a draft's snippet). */
export function snippetOf(text: string | null | undefined, html: string | null | undefined, max = 160): string | null {
  const source = text ?? (html ? html.replace(/<style[\s\S]*?<\/style>|<script[\s\S]*?<\/script>/gi, ' ').replace(/<[^>]*>/g, ' ') : null);
  if (!source) return null;
  const s = source
    .replace(/&nbsp;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return s ? s.slice(0, max) : null;
}
