// A broadcast's review before it is sent (docs/api.md §13.6): the insights and spam score of one
// recipient's email, rendered as the send renders it (send.ts renderSample) and composed, signed
// and scored as delivery would (insights/). A failing insight — the spam score at or above
// `spam.review_threshold` is one — holds the broadcast: sending it answers 422 `review_required`
// with the review, until the review is accepted (POST /broadcasts/{id}/review with `accept`, or a
// send with `"review": "accepted"`). A review that passes lets the send through unchanged, so
// the SDK's `broadcasts.send()` works as it does on Resend.
//
// A review belongs to the content it was made of (its fingerprint): editing the broadcast makes the
// kept review stale, and an accepted one no longer counts. It is computed outside any unit of work
// (it may wait for rspamd up to `spam.timeout`) and kept on the broadcast record.
import { createHash } from 'node:crypto';
import type { Config } from '../config';
import type { BroadcastRec, BroadcastReview } from '../store';
import type { BroadcastReview as ReviewView } from '../schemas/insights';
import type { Insights } from '../insights';
import { ApiError } from '../errors';
import { renderSample, type BroadcastDeps } from './send';

export interface ReviewDeps extends BroadcastDeps {
  config: BroadcastDeps['config'] & Pick<Config, 'spam'>;
  insights: Insights;
}

/** What the review is made of: the fields that make each recipient's email (not its segment). */
export function contentFingerprint(b: BroadcastRec): string {
  const fields = [b.from, b.subject, b.reply_to, b.preview_text, b.html, b.text, b.topic_id];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** Review the broadcast's content as it is now: render a sample, evaluate it. Writes nothing. */
export async function reviewBroadcast(svc: ReviewDeps, b: BroadcastRec): Promise<BroadcastReview> {
  const { prepared, contact } = await renderSample(svc, b);
  const domain = (await svc.store.domains.get(b.team_id, prepared.email.domain_id)) ?? null;
  const threshold = svc.config.spam.review_threshold;
  const { insights, spam } = await svc.insights.evaluate({ email: prepared.email, content: prepared.content, domain }, { threshold });
  const failing = insights.filter((i) => i.status === 'fail');
  return {
    fingerprint: contentFingerprint(b),
    status: failing.length ? 'held' : 'pass',
    threshold,
    sample: { contact_id: contact?.id ?? null, to: Object.keys(prepared.email.recipients)[0] ?? '' },
    insights,
    spam,
    findings: failing.map((i) => i.evidence),
    reviewed_at: new Date().toISOString(),
    accepted_at: null,
  };
}

/** The review kept on the broadcast when it is of the content as it is now; null otherwise. */
export function currentReview(b: BroadcastRec): BroadcastReview | null {
  return b.review && b.review.fingerprint === contentFingerprint(b) ? b.review : null;
}

/** A review as the API shows it. */
export function reviewView(b: BroadcastRec, r: BroadcastReview): ReviewView {
  const { fingerprint, ...rest } = r;
  return { object: 'broadcast_review', broadcast_id: b.id, ...rest, stale: fingerprint !== contentFingerprint(b) };
}

/** 422 `review_required`: the findings in the message, the review beside it (docs/api.md §13.6). */
export class ReviewRequired extends ApiError {
  constructor(readonly review: ReviewView) {
    super(
      422,
      'review_required',
      `The broadcast is held for review: ${review.findings.join(' ')} To send it anyway, accept the review (POST /broadcasts/${review.broadcast_id}/review with {"accept": true}) or send with {"review": "accepted"}.`,
    );
  }

  override toJSON() {
    return { ...super.toJSON(), review: this.review };
  }
}

/**
 * Before a send (POST /broadcasts, POST /broadcasts/{id}/send): the review the broadcast goes out
 * with — the kept one when it was accepted for this content, else a new one (accepted when the
 * caller says so). Throws ReviewRequired when the new one holds it and nobody accepted it.
 */
export async function reviewForSend(svc: ReviewDeps, b: BroadcastRec, accept: boolean): Promise<BroadcastReview> {
  const kept = currentReview(b);
  if (kept?.accepted_at) return kept;
  const review = await reviewBroadcast(svc, b);
  if (accept) return { ...review, accepted_at: review.reviewed_at };
  if (review.status === 'held') throw new ReviewRequired(reviewView(b, review));
  return review;
}
