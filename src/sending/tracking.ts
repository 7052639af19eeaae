// Open and click tracking of one email (docs/mail.md §6), for domains that opted in
// (`open_tracking`, `click_tracking`, docs/api.md §9.4). Every way in — REST, batch, SMTP,
// broadcasts — goes through `prepare`, which calls this before the MIME message is composed.
import type { Config } from '../config';
import type { DomainRec, Store } from '../store';
import { TrackingLinks, trackingBase } from '../links/tracking';
import { trackHtml } from '../links/track-html';
import { UNSUBSCRIBE_PATH } from '../links/signed';

export interface TrackingContext {
  store: Pick<Store, 'secret'>;
  config: Pick<Config, 'public_url'>;
}

/** `html` with the domain's tracking added, or as given when the domain tracks nothing. */
export function withTracking(ctx: TrackingContext, domain: DomainRec, html: string, target: { team: string; email: string; recipient: string | null }): string {
  if (!domain.open_tracking && !domain.click_tracking) return html;
  const links = new TrackingLinks(ctx.store.secret('tracking'));
  const base = trackingBase(ctx.config.public_url, domain);
  const unsubscribe = `${ctx.config.public_url}${UNSUBSCRIBE_PATH}`;
  return trackHtml(html, {
    pixelUrl: domain.open_tracking ? links.openUrl(base, target) : null,
    clickUrl: domain.click_tracking ? (url) => links.clickUrl(base, { ...target, url }) : null,
    isUnsubscribe: (url) => url.startsWith(unsubscribe),
  });
}
