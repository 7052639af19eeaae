// Which metric counters an email event moves (docs/api.md §7.9). Delivery outcomes count
// once per email, whatever number of recipients it had — so rates stay between 0 and 1 — and the
// email remembers what it was counted in (`counted`). Opens and clicks count every human hit, and
// `unique_opened` / `unique_clicked` the first one of each email; hits that looked automated count
// apart (`automated_opened`, `automated_clicked`), outside Resend's metrics.
import type { Counters, EmailRec, EmailStatus } from '../store';
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
