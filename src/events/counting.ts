// The metric counters an email event moves (docs/api.md §7.9), as its entry in the catalogue
// (src/event-catalogue.ts `count`) says. Delivery outcomes count once per email, whatever number
// of recipients it had — so rates stay between 0 and 1 — and the email remembers what it was
// counted in (`counted`). Opens and clicks count every human hit, and `unique_opened` /
// `unique_clicked` the first one of each email; hits that looked automated count apart
// (`automated_opened`, `automated_clicked`), outside Resend's metrics. A bounce counts under its
// bounce class too (`bounced_<class>`; `unknown` when no reply was classed), so the classes add up
// to `bounced`.
import type { Counters, EmailRec, Engagement } from '../store';
import type { Bounce } from '../mail/smtp-reply';
import type { BounceClass } from '../mail/bounce-class';
import type { Count } from '../event-catalogue';

export interface Counted {
  counts: Counters;
  /** The email's `counted` list afterwards. */
  counted: string[];
}

/** The counters an event counted as `count` (its catalogue entry's) moves for `email` (its state before the event). */
export function countersFor(email: EmailRec, count: Count | undefined, d: { bounce?: Bounce; class?: BounceClass; automated?: string | null }): Counted {
  const counted = [...(email.counted ?? [])];
  const counts: Counters = {};
  const once = (metric: string) => {
    if (counted.includes(metric)) return false;
    counts[metric] = 1;
    counted.push(metric);
    return true;
  };
  if (count?.per === 'hit') {
    if (d.automated) counts[count.automated] = 1;
    else {
      counts[count.counter] = 1;
      once(count.unique);
    }
  } else if (count?.per === 'email' && once(count.counter)) {
    // The bounce type is remembered in `counted` too: a broadcast's recipients list reads it.
    if (count.byBounceType) once(count.byBounceType[d.bounce?.type ?? 'Undetermined']);
    if (count.byClass) counts[`${count.counter}_${d.class ?? 'unknown'}`] = 1;
  }
  // (Kinds counted `per: 'event'` are not an email's: Events.other counts them.)
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
