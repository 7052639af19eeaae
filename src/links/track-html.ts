// Adding open and click tracking to an email's html (docs/mail.md §6), with a real HTML parser:
// Bun's HTMLRewriter (Cloudflare's lol-html), which tokenizes as browsers do — markup inside
// <script>, <style>, comments or attribute values is never mistaken for a link — and rewrites in
// place, so every byte it is not asked to change stays as written. Runs before the MIME message is
// composed, so DKIM signs the tracked html.
//   - Click tracking: the href of every <a> and <area> whose URL is http(s) is replaced by a
//     redirect link. mailto:, tel:, in-page anchors, other schemes, links carrying the opt-out
//     attribute `data-posthorn-no-track` (removed from the output) and the unsubscribe links
//     (`isUnsubscribe`) stay as written.
//   - Open tracking: a 1×1 image right before </body> (at the end when there is no body tag).
import { decodeHTMLAttribute } from 'entities';

export const NO_TRACK_ATTRIBUTE = 'data-posthorn-no-track';

export interface TrackHtmlOptions {
  /** The pixel's URL; null: no open tracking. */
  pixelUrl: string | null;
  /** The redirect for a destination URL; null: no click tracking. */
  clickUrl: ((url: string) => string) | null;
  /** Links that must keep working as written (the unsubscribe link). */
  isUnsubscribe: (url: string) => boolean;
}

/**
 * The destination of an href as a browser follows it, when it is a link to track: attribute
 * entities decoded (`&amp;` → `&`), surrounding ASCII whitespace dropped (WHATWG URL parsing does
 * the same), http or https only. Null for everything else.
 */
export function trackableUrl(rawHref: string): string | null {
  const url = decodeHTMLAttribute(rawHref).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '');
  return /^https?:\/\/[^/?#\s]/i.test(url) ? url : null;
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

export function trackHtml(html: string, opts: TrackHtmlOptions): string {
  let rewriter = new HTMLRewriter();
  const { clickUrl, pixelUrl } = opts;
  if (clickUrl)
    rewriter = rewriter.on('a[href], area[href]', {
      element(el) {
        if (el.hasAttribute(NO_TRACK_ATTRIBUTE)) {
          el.removeAttribute(NO_TRACK_ATTRIBUTE);
          return;
        }
        const url = trackableUrl(el.getAttribute('href') ?? '');
        if (url === null || opts.isUnsubscribe(url)) return;
        // setAttribute writes the value as given: tracking links are base64url, nothing to escape.
        el.setAttribute('href', clickUrl(url));
      },
    });
  let pixelPlaced = false;
  const pixel = pixelUrl && `<img src="${escapeAttr(pixelUrl)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
  if (pixel)
    rewriter = rewriter.on('body', {
      element(el) {
        el.onEndTag((end) => {
          if (pixelPlaced) return;
          end.before(pixel, { html: true });
          pixelPlaced = true;
        });
      },
    });
  const out = rewriter.transform(html);
  // No </body> (a fragment, or a body left open): the pixel goes at the end.
  return pixel && !pixelPlaced ? out + pixel : out;
}
