// Broadcast analytics (docs/api.md §13.5): who of a broadcast's recipients reached a state
// (GET /broadcasts/{id}/recipients?type=…) and which links were clicked how often
// (GET /broadcasts/{id}/clicked-links). Recipients page through the broadcast's emails (the
// `broadcast` index), each answering from what its events recorded on it; clicked links read the
// per-broadcast link counters. Opens and clicks are human ones: automated hits stay out, as in
// the metrics.
import type { EmailRec, PageQuery, StoreReader } from '../store';
import { errors } from '../errors';
import type { Counter } from '../event-catalogue';
import type { BroadcastRecipient, ClickedLink } from '../schemas/broadcasts';

// Each one a counter of the catalogue: all but sent, opened and clicked are read from the email's `counted`.
export const RECIPIENT_TYPES = [
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'suppressed',
] as const satisfies readonly Counter[];
export type RecipientType = (typeof RECIPIENT_TYPES)[number];
const BOUNCE_TYPES = ['permanent', 'transient', 'undetermined'] as const;
type BounceType = (typeof BOUNCE_TYPES)[number];

export interface RecipientsQuery {
  type?: string;
  email?: string;
  bounce_type?: string;
}

/** The recipient address of a broadcast email (one `to`, bare). */
function addressOf(e: EmailRec): string {
  return Object.keys(e.recipients)[0] ?? '';
}

/** From the email's `counted` (src/events/counting.ts); emails counted before it kept the type: undetermined. */
export function bounceTypeOf(e: EmailRec): BounceType {
  const c = e.counted ?? [];
  return c.includes('bounced_permanent') ? 'permanent' : c.includes('bounced_transient') ? 'transient' : 'undetermined';
}

function has(e: EmailRec, type: RecipientType): boolean {
  switch (type) {
    case 'sent':
      return e.sent_at !== null;
    case 'opened':
      return (e.engagement?.opens ?? 0) > 0;
    case 'clicked':
      return (e.engagement?.clicks ?? 0) > 0;
    default:
      return (e.counted ?? []).includes(type);
  }
}

export function checkRecipientsQuery(q: RecipientsQuery): { type: RecipientType; email: string | null; bounceType: BounceType | null } {
  if (q.type === undefined || q.type === '') throw errors.missingParameter('type');
  if (!RECIPIENT_TYPES.includes(q.type as RecipientType)) throw errors.validation(`Invalid \`type\`: use one of ${RECIPIENT_TYPES.join(', ')}.`);
  let bounceType: BounceType | null = null;
  if (q.bounce_type !== undefined) {
    if (q.type !== 'bounced') throw errors.validation('`bounce_type` applies only with `type=bounced`.');
    if (!BOUNCE_TYPES.includes(q.bounce_type as BounceType)) throw errors.validation(`Invalid \`bounce_type\`: use one of ${BOUNCE_TYPES.join(', ')}.`);
    bounceType = q.bounce_type as BounceType;
  }
  return { type: q.type as RecipientType, email: q.email ? q.email.toLowerCase() : null, bounceType };
}

export function broadcastRecipients(store: StoreReader, team: string, broadcastId: string, q: RecipientsQuery, page: PageQuery) {
  const { type, email, bounceType } = checkRecipientsQuery(q);
  return store.emails.pageBy('broadcast', broadcastId, team, page, 20, (e) => {
    if (!has(e, type)) return undefined;
    const address = addressOf(e);
    if (email && address.toLowerCase() !== email) return undefined;
    const row: BroadcastRecipient = { id: e.id, contact_id: e.contact_id ?? null, email: address };
    if (type === 'opened') row.count = e.engagement?.opens ?? 0;
    if (type === 'clicked') {
      row.count = e.engagement?.clicks ?? 0;
      row.clicked_links = Object.entries(e.engagement?.links ?? {}).map(([url, clicks]) => ({ url, clicks }));
    }
    if (type === 'bounced') {
      const bt = bounceTypeOf(e);
      if (bounceType && bt !== bounceType) return undefined;
      row.bounce_type = bt;
    }
    return row;
  });
}

export async function clickedLinks(store: StoreReader, team: string, broadcastId: string, page: PageQuery) {
  const p = await store.metrics.links(team, broadcastId, page);
  return { has_more: p.has_more, data: p.data.map((l): ClickedLink => ({ id: l.cursor, url: l.url, clicks: l.clicks, unique_clicks: l.unique_clicks })) };
}
