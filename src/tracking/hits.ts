// Opens and clicks (docs/mail.md §6): a verified pixel or link hit becomes `email.opened` /
// `email.clicked` through the one event function, which also keeps the email's engagement counts
// and the broadcast's link counts, in the same unit of work. The pixel and the redirect are answered
// without waiting for that commit (a mail client waits on neither), so a crash in the few
// milliseconds between the answer and the commit can lose that one hit's event; a hit is never
// recorded twice. At most `MAX_PENDING` hits wait for their commit at once; past that the answer
// waits too, so memory stays bounded under a flood.
import type { Config } from '../config';
import type { Store } from '../store';
import type { Events } from '../events';
import type { ClickTarget, TrackingTarget } from '../links/tracking';
import { log } from '../log';
import { automatedReason } from './automated';

export const MAX_PENDING = 1000;

export interface HitsDeps {
  store: Store;
  events: Events;
  config: Pick<Config, 'tracking'>;
}

/** The request a hit came in. */
export interface HitRequest {
  method: string;
  userAgent: string;
  ip: string;
}

export class TrackingHits {
  private pending = 0;

  constructor(private readonly deps: HitsDeps) {}

  /** Record a pixel hit; resolves once it may be answered. */
  open(t: TrackingTarget, req: HitRequest): Promise<void> {
    return this.admit(this.record(t, null, req));
  }

  click(t: ClickTarget, req: HitRequest): Promise<void> {
    return this.admit(this.record(t, t.url, req));
  }

  /** Hits recorded but not yet committed. */
  get inFlight(): number {
    return this.pending;
  }

  private async admit(write: Promise<void>): Promise<void> {
    this.pending++;
    const settled = write.catch((e) => log.error('tracking.hit_failed', { error: String((e as Error)?.stack ?? e) })).finally(() => this.pending--);
    if (this.pending > MAX_PENDING) await settled;
  }

  private record(t: TrackingTarget, url: string | null, req: HitRequest): Promise<void> {
    const { store, events, config } = this.deps;
    return store.write(async (tx) => {
      const email = await tx.emails.get(t.team, t.email);
      // Expired (retention) or deleted: the link still works, there is nothing left to record on.
      if (!email) return;
      const now = Date.now();
      const at = new Date(now).toISOString();
      const automated = automatedReason(
        { method: req.method, userAgent: req.userAgent, deliveredAt: email.delivered_at ? Date.parse(email.delivered_at) : null, now },
        config.tracking.prefetch_window,
      );
      const recipients = t.recipient ? [t.recipient] : undefined;
      if (url === null) await events.email(tx, email, 'opened', { recipients, at, automated });
      else
        await events.email(tx, email, 'clicked', {
          recipients,
          at,
          automated,
          click: { ipAddress: req.ip, link: url, timestamp: at, userAgent: req.userAgent },
        });
    });
  }
}
