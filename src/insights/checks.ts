// The deliverability insights of one message (README "Deliverability", "Insights"): each is a
// small function of what was found about the message (`MessageFacts`, gathered by index.ts) to a
// status, a sentence of evidence and a fix. No I/O here: the table test (test/insights/checks.test.ts)
// holds each one to its cases.
import type { Insight, InsightName, SpamVerdict } from '../store';
import { isShortener } from './shorteners';

/** Gmail clips a message whose HTML is larger than this ("[Message clipped]", hiding the rest and the unsubscribe link). */
export const GMAIL_CLIP_BYTES = 102 * 1024;

/** The DMARC policy that applies to the sending domain (RFC 7489 §6.6.3; the tree walk of RFC 9989 §4.10), or why it is not known. */
export type DmarcFinding =
  | { status: 'found'; policy: 'none' | 'quarantine' | 'reject'; record: string; at: string }
  | { status: 'none'; at: string }
  | { status: 'error'; reason: string };

export interface MessageFacts {
  /** The sending domain, lowercase. */
  domain: string;
  /** The From address. */
  from: string;
  /** The HTML as given (before tracking); null when the message has none. */
  html: string | null;
  /** Bytes of the HTML part as sent (tracking added), UTF-8. */
  htmlBytes: number;
  /** The message's text/plain part: given by the sender, derived from the HTML, or none. */
  textPart: 'given' | 'derived' | 'none';
  /** The http(s) links of the HTML, as written (before tracking). */
  links: string[];
  /** The images of the HTML: whether each has an `alt` attribute. */
  images: { src: string; alt: boolean }[];
  /** Bulk mail: a broadcast's email. */
  bulk: boolean;
  /** The List-Unsubscribe header (RFC 2369), and List-Unsubscribe-Post for one-click (RFC 8058). */
  listUnsubscribe: { present: boolean; oneClick: boolean };
  /** Open and click tracking of the email. */
  tracking: { open: boolean; click: boolean };
  /** The host tracking links and the pixel point at, and whether it is the domain's own tracking subdomain. */
  trackingHost: string;
  customTracking: boolean;
  /** Posthorn's own host (`public_url`): its unsubscribe pages are not the sender's links. */
  ownHost: string;
  dmarc: DmarcFinding;
  /** rspamd's verdict; null when rspamd is not configured. */
  spam: SpamVerdict | null;
  /** `spam.review_threshold`. */
  threshold: number;
}

// Second-level labels under which ccTLDs register names (co.uk, com.au, ne.jp): the common ones.
const SECOND_LEVEL = new Set(['ac', 'co', 'com', 'edu', 'gov', 'gv', 'ltd', 'ne', 'net', 'or', 'org', 'plc', 'sch']);

/**
 * The name a host is registered under — `example.com` of `mail.example.com`, `example.co.uk` of
 * `news.example.co.uk` — from the shape of the name: two labels, or three under a country's
 * second-level label. (The Public Suffix List would know every registry's rules; this knows the
 * common ones, which is what the insights need.)
 */
export function registeredDomain(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  if (labels.length <= 2) return labels.join('.');
  const [second, top] = labels.slice(-2);
  const n = top!.length === 2 && SECOND_LEVEL.has(second!) ? 3 : 2;
  return labels.slice(-n).join('.');
}

const hostOf = (url: string): string | null => {
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
};

/** Up to three items, then how many more. */
const some = (items: string[]) => (items.length <= 3 ? items.join(', ') : `${items.slice(0, 3).join(', ')} and ${items.length - 3} more`);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

type Check = (f: MessageFacts) => Omit<Insight, 'name'>;

const pass = (evidence: string): Omit<Insight, 'name'> => ({ status: 'pass', evidence, fix: null });

/** Every check, by name, in the order of INSIGHT_NAMES. */
export const CHECKS: Record<InsightName, Check> = {
  link_domains(f) {
    const site = registeredDomain(f.domain);
    const hosts = [...new Set(f.links.map(hostOf).filter((h): h is string => !!h && h !== f.ownHost))];
    if (!hosts.length) return pass('The message links to no web address.');
    const foreign = hosts.filter((h) => registeredDomain(h) !== site);
    if (!foreign.length) return pass(`Every link goes to ${site} (${some(hosts)}), the sending domain's own site.`);
    return {
      status: 'warn',
      evidence: `${foreign.length === hosts.length ? 'No link' : `${hosts.length - foreign.length} of ${hosts.length} linked hosts`} ${foreign.length === hosts.length ? `goes to ${site}` : `go to ${site}`}: ${some(foreign)} ${foreign.length === 1 ? 'is' : 'are'} another site's.`,
      fix: `Link to pages on ${site} (or a subdomain of it), which the receiver can tie to the sender; filters weigh links to other sites against the message.`,
    };
  },

  dmarc(f) {
    const d = f.dmarc;
    if (d.status === 'error') return { status: 'unavailable', evidence: `The DMARC record could not be looked up: ${d.reason}.`, fix: null };
    // Not a failure: small senders deliver without one; Gmail and Yahoo require it of bulk senders.
    if (d.status === 'none')
      return {
        status: 'warn',
        evidence: `No DMARC record at _dmarc.${f.domain}${d.at !== f.domain ? ` or _dmarc.${d.at}` : ''}.`,
        fix: `Publish one, for example \`_dmarc.${registeredDomain(f.domain)}  TXT  "v=DMARC1; p=none; rua=mailto:dmarc@${registeredDomain(f.domain)}"\` (the domain's recommended records list it); Gmail and Yahoo require DMARC of bulk senders.`,
      };
    if (d.policy === 'none')
      return {
        status: 'warn',
        evidence: `_dmarc.${d.at} says p=none: receivers are asked to deliver mail that fails authentication all the same.`,
        fix: 'Once the aggregate reports show only your own mail passing, move to p=quarantine, then p=reject, so that nobody can send as this domain.',
      };
    return pass(
      `_dmarc.${d.at} publishes p=${d.policy}: mail failing authentication in this domain's name is ${d.policy === 'reject' ? 'refused' : 'sent to spam'}.`,
    );
  },

  text_part(f) {
    if (f.textPart === 'given') return pass('The message has a plain-text part, as given.');
    if (f.textPart === 'derived') return pass('The message has a plain-text part, made from the HTML.');
    if (f.html === null) return { status: 'fail', evidence: 'The message has neither an HTML nor a plain-text part.', fix: 'Give it a `text` body.' };
    return {
      status: 'warn',
      evidence: 'The message has HTML only, no plain-text part.',
      fix: 'Give a `text` body, or leave `text` out (not "") so that Posthorn makes one from the HTML: filters score HTML-only mail higher.',
    };
  },

  no_reply(f) {
    const local = f.from.slice(0, f.from.lastIndexOf('@')).toLowerCase();
    if (/^(no|do[-_.]?not)[-_.]?reply\b|^noreply/.test(local))
      return {
        status: 'warn',
        evidence: `It is sent from ${f.from}, an address that takes no replies.`,
        fix: 'Send from an address people can answer (or set `reply_to` to one): replies tell mailbox providers the mail is wanted, and a no-reply sender tells recipients to use the spam button instead.',
      };
    return pass(`It is sent from ${f.from}, an address that can be answered.`);
  },

  html_size(f) {
    if (f.html === null) return pass('The message has no HTML part.');
    if (f.htmlBytes > GMAIL_CLIP_BYTES)
      return {
        status: 'fail',
        evidence: `The HTML is ${kb(f.htmlBytes)} as sent; Gmail clips messages over 102 KB, hiding the rest of it (and the unsubscribe link).`,
        fix: 'Shorten the HTML: inline less CSS, drop comments and unused markup, and link to long content instead.',
      };
    return pass(`The HTML is ${kb(f.htmlBytes)} as sent, under the 102 KB at which Gmail clips messages.`);
  },

  url_shorteners(f) {
    const short = [...new Set(f.links.map(hostOf).filter((h): h is string => !!h && isShortener(h)))];
    if (!short.length) return pass('No link goes through a URL shortener.');
    return {
      status: 'fail',
      evidence: `Links go through URL shorteners: ${some(short)}.`,
      fix: 'Link to the destination itself: spammers hide behind shorteners, so filters and blocklists treat their links as suspect.',
    };
  },

  sending_subdomain(f) {
    const site = registeredDomain(f.domain);
    if (f.domain !== site) return pass(`It is sent from ${f.domain}, a subdomain of ${site}: its sending reputation is kept apart from the main domain's.`);
    return {
      status: 'warn',
      evidence: `It is sent from ${f.domain} itself, not from a subdomain.`,
      fix: `Send from a subdomain (mail.${site}, news.${site}): a problem with this mail then cannot hurt the reputation of the mail your people send from ${site}.`,
    };
  },

  tracking_subdomain(f) {
    if (!f.tracking.open && !f.tracking.click) return pass('Open and click tracking are off: the message has no tracking links.');
    if (f.customTracking) return pass(`Tracking links point at ${f.trackingHost}, the domain's own tracking subdomain.`);
    return {
      status: 'warn',
      evidence: `Tracking links point at ${f.trackingHost}, a host that is not the sending domain's.`,
      fix: `Set the domain's \`tracking_subdomain\` (PATCH /domains/{id}) and publish its CNAME, so that tracked links and the open pixel are under ${registeredDomain(f.domain)}.`,
    };
  },

  list_unsubscribe(f) {
    const { present, oneClick } = f.listUnsubscribe;
    if (!f.bulk)
      return pass(present ? 'The message has a List-Unsubscribe header.' : 'Not bulk mail (not sent by a broadcast): it needs no List-Unsubscribe header.');
    if (!present)
      return {
        status: 'fail',
        evidence: 'Bulk mail without a List-Unsubscribe header.',
        fix: 'Add `List-Unsubscribe` and `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058): Gmail and Yahoo require one-click unsubscribe of bulk senders.',
      };
    if (!oneClick)
      return {
        status: 'warn',
        evidence: 'Bulk mail with List-Unsubscribe but without List-Unsubscribe-Post (one-click, RFC 8058).',
        fix: 'Add `List-Unsubscribe-Post: List-Unsubscribe=One-Click` with an https unsubscribe URL.',
      };
    return pass('Bulk mail with List-Unsubscribe and one-click List-Unsubscribe-Post (RFC 8058).');
  },

  image_alt(f) {
    if (!f.images.length) return pass('The message has no images.');
    const bare = f.images.filter((i) => !i.alt);
    if (!bare.length) return pass(`Every image (${f.images.length}) has alt text.`);
    return {
      status: 'warn',
      evidence: `${bare.length} of ${f.images.length} images have no alt attribute: ${some(bare.map((i) => i.src.slice(0, 80) || '(no src)'))}.`,
      fix: 'Give each image an alt text (alt="" for decoration): many clients show no images until asked, and filters count mail that is mostly unlabeled images.',
    };
  },

  spam_score(f) {
    const s = f.spam;
    if (!s) return { status: 'unavailable', evidence: 'rspamd is not configured (`spam.rspamd_url`), so the message was not scored.', fix: null };
    if (s.status === 'unavailable' || s.score === null)
      return { status: 'unavailable', evidence: `No spam score: ${s.reason ?? 'rspamd did not answer'}.`, fix: null };
    const heavy = s.symbols.filter((x) => x.score > 0).slice(0, 3);
    const rules = heavy.length ? `; it weighs most: ${heavy.map((x) => `${x.name} (${x.score})`).join(', ')}` : '';
    const evidence = `rspamd scores it ${s.score} (${s.action ?? 'no action'}${s.required_score !== null ? `; it rejects at ${s.required_score}` : ''})${rules}.`;
    const fix = heavy.length
      ? `Look at what ${heavy.map((x) => x.name).join(', ')} stand${heavy.length === 1 ? 's' : ''} for (rspamd's symbol list) and change what triggers them.`
      : null;
    if (s.score >= f.threshold || s.action === 'reject' || s.action === 'soft reject')
      return { status: 'fail', evidence: `${evidence} That is at or above the review threshold of ${f.threshold}.`, fix };
    if (s.action === 'add header' || s.action === 'rewrite subject' || s.action === 'greylist') return { status: 'warn', evidence, fix };
    return pass(evidence);
  },
};
