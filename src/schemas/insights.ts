// Deliverability on the wire (Posthorn extensions, docs/api.md §7.12, §8, §13.6): an email's
// insights, rspamd's verdict (on insights, broadcast reviews and received emails), and a
// broadcast's review before it is sent. The stored records have the same fields
// (src/store/insight-records.ts).
import { Type } from '@sinclair/typebox';
import { Id, Nullable, Timestamp, type Static } from './common';

const Lit = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

export const INSIGHT_STATUSES = ['pass', 'warn', 'fail', 'unavailable'] as const;

/** The insights, in the order they are shown (src/insights/checks.ts makes each; the store keeps these names). */
export const INSIGHT_NAMES = [
  'link_domains',
  'dmarc',
  'text_part',
  'no_reply',
  'html_size',
  'url_shorteners',
  'sending_subdomain',
  'tracking_subdomain',
  'list_unsubscribe',
  'image_alt',
  'spam_score',
] as const;

/** One insight (README "Deliverability", "Insights": what each one checks). */
export const Insight = Type.Object({
  name: Lit(INSIGHT_NAMES, 'What was checked'),
  status: Lit(INSIGHT_STATUSES, '`unavailable`: it could not be checked (the evidence says why)'),
  evidence: Type.String({ description: 'What was found, in a sentence' }),
  fix: Nullable(Type.String({ description: 'What to do about it; null when nothing' })),
});
export type Insight = Static<typeof Insight>;

/** rspamd's verdict on a message, or why there is none (docs/api.md §7.12). */
export const SpamVerdict = Type.Object({
  scanner: Type.Literal('rspamd'),
  status: Lit(['scored', 'unavailable'] as const),
  score: Nullable(Type.Number()),
  required_score: Nullable(Type.Number()),
  action: Nullable(Type.String({ description: "rspamd's action: no action, greylist, add header, rewrite subject, soft reject or reject" })),
  symbols: Type.Array(
    Type.Object({
      name: Type.String(),
      score: Type.Number(),
      description: Nullable(Type.String()),
      options: Type.Array(Type.String()),
    }),
    { description: 'The rules that matched, the heaviest first' },
  ),
  reason: Nullable(Type.String({ description: 'Why there is no score; null when scored' })),
  checked_at: Timestamp,
});
export type SpamVerdict = Static<typeof SpamVerdict>;

/** GET /emails/{id}/insights?refresh=true recomputes what was kept. */
export const InsightsQuery = Type.Object({
  refresh: Type.Optional(Type.String({ description: '`true`: compute again rather than answer what was kept' })),
});

/** GET /emails/{id}/insights. */
export const EmailInsights = Type.Object({
  object: Type.Literal('email_insights'),
  email_id: Id,
  computed_at: Timestamp,
  insights: Type.Array(Insight),
  spam: Nullable(SpamVerdict, { description: 'Null: rspamd is not configured (`spam.rspamd_url`)' }),
});
export type EmailInsights = Static<typeof EmailInsights>;

/** POST /broadcasts/{id}/review: `accept: true` records that the findings were read and the broadcast may go out anyway. */
export const ReviewRequest = Type.Object({
  accept: Type.Optional(Type.Boolean({ error: 'The `accept` field must be a boolean.' })),
});

/** A broadcast's review (docs/api.md §13.6). */
export const BroadcastReview = Type.Object({
  object: Type.Literal('broadcast_review'),
  broadcast_id: Id,
  status: Lit(['pass', 'held'] as const, '`held`: a failing insight, or a spam score at or above the threshold'),
  threshold: Type.Number({ description: '`spam.review_threshold` when the review was made' }),
  sample: Type.Object({ contact_id: Nullable(Id), to: Type.String() }, { description: 'Whose email was rendered for the review' }),
  insights: Type.Array(Insight),
  spam: Nullable(SpamVerdict),
  findings: Type.Array(Type.String(), { description: 'Why it is held, one sentence each' }),
  reviewed_at: Timestamp,
  accepted_at: Nullable(Timestamp),
  /** The broadcast's content changed since: sending reviews it again. */
  stale: Type.Boolean(),
});
export type BroadcastReview = Static<typeof BroadcastReview>;
