// Public URL shorteners: anyone can make a link on them to anywhere, so spammers hide behind them
// and filters weigh them (rspamd's url_redirector and SURBL lists; Gmail's and Microsoft's
// guidance for bulk senders says to link to your own domain). A link on one of these hosts — or a
// subdomain of one — fails the `url_shorteners` insight (README "Deliverability", "Insights").
// First-party short hosts that lead only to their own site (youtu.be, amzn.to) are not listed.
export const URL_SHORTENERS: readonly string[] = [
  'adf.ly',
  'bit.do',
  'bit.ly',
  'bitly.com',
  'bl.ink',
  'buff.ly',
  'cli.gs',
  'clck.ru',
  'cutt.ly',
  'goo.gl',
  'is.gd',
  'j.mp',
  'lnkd.in',
  'ow.ly',
  'qr.ae',
  'rb.gy',
  'rebrand.ly',
  's.id',
  'shorte.st',
  'shorturl.at',
  'soo.gd',
  't.co',
  't.ly',
  'tiny.cc',
  'tinyurl.com',
  'tr.im',
  'trib.al',
  'u.to',
  'v.gd',
  'x.co',
];

const SET = new Set(URL_SHORTENERS);

/** Is `host` (lowercase) a shortener's, or under one? */
export function isShortener(host: string): boolean {
  for (let h = host; h.includes('.'); h = h.slice(h.indexOf('.') + 1)) if (SET.has(h)) return true;
  return false;
}
