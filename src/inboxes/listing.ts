// Which threads a list or a search answers (docs/api.md §25.4): the filters of
// GET /inboxes/{inbox}/threads — folders, labels, read state — and those search adds — addresses,
// attachments, a time range — as one predicate over a thread, and the cursor pagination of a
// search's ranked hits.
import type { InboxThreadRec, PageQuery } from '../store';
import { INBOX_FOLDERS, type InboxFolder } from '../store/inbox-records';
import { errors } from '../errors';
import { isUuid } from '../ids';

export interface ThreadFilter {
  folders: InboxFolder[] | null;
  labels: string[] | null;
  read: boolean | null;
  from: string[] | null;
  to: string[] | null;
  cc: string[] | null;
  bcc: string[] | null;
  hasAttachment: boolean | null;
  start: string | null;
  end: string | null;
}

const split = (v: string | undefined) =>
  v === undefined
    ? null
    : v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);

const bool = (v: string | undefined) => (v === undefined ? null : v === 'true');

function date(name: string, v: string | undefined): string | null {
  if (v === undefined) return null;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw errors.validation(`The \`${name}\` parameter must be an ISO 8601 date.`);
  return new Date(t).toISOString();
}

/** The filter a list or search query names; 422 for an unknown folder, a label that is no id, a bad date. */
export function threadFilter(q: Record<string, string | undefined>): ThreadFilter {
  const folders = split(q.folders);
  for (const f of folders ?? [])
    if (!(INBOX_FOLDERS as readonly string[]).includes(f))
      throw errors.validation(`The \`folders\` parameter must name folders of ${INBOX_FOLDERS.map((x) => `\`${x}\``).join(', ')}.`);
  const labels = split(q.labels)?.map((l) => l.toLowerCase()) ?? null;
  for (const l of labels ?? []) if (!isUuid(l)) throw errors.validation('The `labels` parameter must be label ids.');
  const lower = (v: string | undefined) => split(v)?.map((a) => a.toLowerCase()) ?? null;
  return {
    folders: folders as InboxFolder[] | null,
    labels,
    read: bool(q.read),
    from: lower(q.from),
    to: lower(q.to),
    cc: lower(q.cc),
    bcc: lower(q.bcc),
    hasAttachment: bool(q.has_attachment),
    start: date('start_date', q.start_date),
    end: date('end_date', q.end_date),
  };
}

const mentions = (list: string[], wanted: string[] | null) => !wanted || wanted.some((w) => list.some((a) => a.toLowerCase().includes(w)));

/**
 * Does the thread pass? Folders: its folder is one of them; labels: it has one of them; addresses: any of the thread's latest
 * addresses of that kind contains one given; dates: its latest message within the range.
 */
export function passes(t: InboxThreadRec, f: ThreadFilter): boolean {
  if (f.folders && !f.folders.includes(t.folder)) return false;
  if (f.labels && !f.labels.some((l) => t.labels.includes(l))) return false;
  if (f.read !== null && t.read !== f.read) return false;
  if (f.from && !mentions([t.from ?? '', ...t.participants], f.from)) return false;
  if (!mentions([...t.to, ...t.participants], f.to) || !mentions(t.cc, f.cc) || !mentions(t.bcc, f.bcc)) return false;
  if (f.hasAttachment !== null && t.has_attachment !== f.hasAttachment) return false;
  if (f.start && t.last_at < f.start) return false;
  if (f.end && t.last_at > f.end) return false;
  return true;
}

/** One page of ranked items by cursor (`after`: the items after that id; `before`: those before it). */
export function pageOf<T extends { id: string }>(items: T[], q: PageQuery, defaultLimit = 20): { has_more: boolean; data: T[] } {
  const limit = q.limit ?? defaultLimit;
  if (q.before) {
    const end = items.findIndex((x) => x.id === q.before);
    const upto = Math.max(0, end);
    const start = Math.max(0, upto - limit);
    return { has_more: start > 0, data: items.slice(start, upto) };
  }
  const from = q.after ? items.findIndex((x) => x.id === q.after) + 1 : 0;
  if (q.after && from === 0) return { has_more: false, data: [] };
  return { has_more: from + limit < items.length, data: items.slice(from, from + limit) };
}
