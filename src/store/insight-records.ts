// Deliverability insights (README "Deliverability"): what Posthorn found about one email's message
// — its links, DMARC, parts, size, sender, tracking, images — and rspamd's verdict on it, kept
// beside the email (never on it: the accept path writes nothing for them), and a broadcast's review
// of a rendered sample before it is sent (docs/api.md §7.12, §13.6). The wire shapes are
// src/schemas/insights.ts, the same fields.
import type { Rec } from './interface';

export type InsightStatus = 'pass' | 'warn' | 'fail' | 'unavailable';

import { INSIGHT_NAMES } from '../schemas/insights';

/** The insights, in the order they are shown: the wire schema's list (src/schemas/insights.ts). */
export { INSIGHT_NAMES };
export type InsightName = (typeof INSIGHT_NAMES)[number];

/** One finding: what was checked, how it went, the evidence in a sentence, and what to do about it (null when nothing). */
export interface Insight {
  name: InsightName;
  status: InsightStatus;
  evidence: string;
  fix: string | null;
}

/** One rule rspamd matched, with its weight in the score. */
export interface SpamSymbol {
  name: string;
  score: number;
  description: string | null;
  options: string[];
}

/**
 * rspamd's verdict on a message (its `/checkv2` answer), or why there is none: rspamd could not be
 * reached, did not answer within `spam.timeout`, or answered something else.
 */
export interface SpamVerdict {
  scanner: 'rspamd';
  status: 'scored' | 'unavailable';
  /** Null when unavailable. */
  score: number | null;
  required_score: number | null;
  /** rspamd's action: `no action`, `greylist`, `add header`, `rewrite subject`, `soft reject`, `reject`. */
  action: string | null;
  /** The rules that matched, the heaviest first. */
  symbols: SpamSymbol[];
  /** Why there is no score (unavailable); null when scored. */
  reason: string | null;
  checked_at: string;
}

/**
 * The insights of one sent email, computed when first asked for (GET /emails/{id}/insights) and
 * kept for the email's retention. Keyed by the email's id (`id`; `created_at` and `scheduled_at`
 * are the email's, so both leave together).
 */
export interface EmailInsightsRec extends Rec {
  scheduled_at: string | null;
  computed_at: string;
  insights: Insight[];
  /** Null: rspamd is not configured (`spam.rspamd_url`). */
  spam: SpamVerdict | null;
}

/** A broadcast's review (docs/api.md §13.6): the insights and score of one recipient's email, rendered as it would be sent. */
export interface BroadcastReview {
  /** The content it was made of (from, subject, bodies, reply-to, topic): a review of other content is stale. */
  fingerprint: string;
  /** `held`: a failing insight, or a score at or above the threshold — sending needs the review accepted. */
  status: 'pass' | 'held';
  /** `spam.review_threshold` when it was made. */
  threshold: number;
  /** Whose email was rendered: the first contact who would receive it, or a stand-in when none would. */
  sample: { contact_id: string | null; to: string };
  insights: Insight[];
  spam: SpamVerdict | null;
  /** Why it is held, one sentence each (empty when it passes). */
  findings: string[];
  reviewed_at: string;
  /** When someone accepted it (to send despite the findings); null until then. */
  accepted_at: string | null;
}
