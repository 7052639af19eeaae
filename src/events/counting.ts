// Which metric counters an email event moves (docs/api.md §7.9). Delivery outcomes count
// once per email, whatever number of recipients it had — so rates stay between 0 and 1 — and the
// email remembers what it was counted in (`counted`). Opens and clicks count every human hit, and
// `unique_opened` / `unique_clicked` the first one of each email; hits that looked automated count
// apart (`automated_opened`, `automated_clicked`), outside Resend's metrics.
import type { Counters, EmailRec, EmailStatus, Engagement } from '../store';
import type { Bounce } from '../mail/smtp-reply';

/** Statuses counted once per email, under the metric of the same name. */
const ONCE: Partial<Record<EmailStatus | 'unsubscribed', string>> = {
  sent: 'sent',
  delivered: 'delivered',
  delivery_delayed: 'delivery_delayed',
  bounced: 'bounced',
  complained: 'complained',
  suppressed: 'suppressed',
  failed: 'failed',
  unsubscribed: 'unsubscribed',
};

const BOUNCE_TYPE: Record<string, string> = {
  Permanent: 'bounced_permanent',
  Transient: 'bounced_transient',
};

export interface Counted {
  counts: Counters;
  /** The email's `counted` list afterwards. */
  counted: string[];
}

/** The counters `status` moves for `email` (its state before the event). */
export function countersFor(email: EmailRec, status: EmailStatus | 'unsubscribed', d: { bounce?: Bounce; automated?: string | null }): Counted {
  const counted = [...(email.counted ?? [])];
  const counts: Counters = {};
  const once = (metric: string) => {
    if (counted.includes(metric)) return false;
    counts[metric] = 1;
    counted.push(metric);
    return true;
  };
  const hit = (metric: 'opened' | 'clicked') => {
    if (d.automated) counts[`automated_${metric}`] = 1;
    else {
      counts[metric] = 1;
      once(`unique_${metric}`);
    }
  };
  if (status === 'opened' || status === 'clicked') hit(status);
  else if (ONCE[status] && once(ONCE[status]!) && status === 'bounced') counts[BOUNCE_TYPE[d.bounce?.type ?? ''] ?? 'bounced_undetermined'] = 1;
  return { counts, counted };
}

const NO_ENGAGEMENT: Engagement = { opens: 0, clicks: 0, automated_opens: 0, automated_clicks: 0, links: {}, first_opened_at: null, first_clicked_at: null };

/**
 * An email's engagement after an open (`link` null) or a click on `link`, and whether this is the
 * first human click on that link (a broadcast's `unique_clicks`).
 */
export function engagementAfter(
  e: Engagement | undefined,
  link: string | null,
  automated: boolean,
  at: string,
): { engagement: Engagement; firstClickOfLink: boolean } {
  const next: Engagement = { ...NO_ENGAGEMENT, ...e, links: { ...e?.links } };
  let firstClickOfLink = false;
  if (link === null) {
    if (automated) next.automated_opens++;
    else {
      next.opens++;
      next.first_opened_at ??= at;
    }
  } else if (automated) next.automated_clicks++;
  else {
    next.clicks++;
    next.first_clicked_at ??= at;
    firstClickOfLink = !next.links[link];
    next.links[link] = (next.links[link] ?? 0) + 1;
  }
  return { engagement: next, firstClickOfLink };
}
