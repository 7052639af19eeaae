// Open and click tracking of one email (docs/mail.md §6), for domains that opted in
// (`open_tracking`, `click_tracking`, docs/api.md §9.4). Every way in — REST, batch, SMTP,
// broadcasts — goes through `prepare`, which records whether the email is tracked (`trackingOf`);
// the links are added when the message is composed (message.ts).
import type { Config } from '../config';
import type { DomainRec, Store } from '../store';
import { TrackingLinks, trackingBase } from '../links/tracking';
import { trackHtml } from '../links/track-html';
import { UNSUBSCRIBE_PATH } from '../links/signed';

export interface TrackingContext {
  store: Pick<Store, 'secret'>;
  config: Pick<Config, 'public_url'>;
}

/** Whether an email is tracked: the sending domain's settings when it is accepted. */
export function trackingOf(domain: DomainRec): { open: boolean; click: boolean } {
  return { open: !!domain.open_tracking, click: !!domain.click_tracking };
}

/** `html` with tracking added as `track` says, or as given when it says none. */
export function withTracking(
  ctx: TrackingContext,
  domain: DomainRec,
  html: string,
  target: { team: string; email: string; recipient: string | null },
  track: { open: boolean; click: boolean },
): string {
  if (!track.open && !track.click) return html;
  const links = new TrackingLinks(ctx.store.secret('tracking'));
  const base = trackingBase(ctx.config.public_url, domain);
  const unsubscribe = `${ctx.config.public_url}${UNSUBSCRIBE_PATH}`;
  return trackHtml(html, {
    pixelUrl: track.open ? links.openUrl(base, target) : null,
    clickUrl: track.click ? (url) => links.clickUrl(base, { ...target, url }) : null,
    isUnsubscribe: (url) => url.startsWith(unsubscribe),
  });
}
