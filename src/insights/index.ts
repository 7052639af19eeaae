// Deliverability insights of sent mail (README "Deliverability", "Insights"; docs/api.md §7.12):
// the message is composed and DKIM-signed as delivery composes and signs it, its HTML read with a
// real parser (Bun's HTMLRewriter) for links and images, the sending domain's DMARC policy looked
// up through Posthorn's resolver (mailauth's policy discovery), and the signed message scored by
// rspamd when `spam.rspamd_url` is set; checks.ts turns what was found into the insights.
//
// Computed when first asked for, never when an email is accepted or delivered: accepting costs
// 80–90 µs of the HTTP thread per email, composing and signing alone cost more than ten times that,
// and most emails are never looked at (README "Deliverability", "Insights": the figures). What was
// computed is kept in the `emailInsights` collection, keyed by the email's id and kept as long as
// the email; the email record itself is never rewritten for it.
import { isSystemMail } from '../mail/system';
import { dmarc } from 'mailauth';
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import type { DomainRec, EmailContent, EmailInsightsRec, EmailRec, Insight, SpamVerdict, Store } from '../store';
import { INSIGHT_NAMES } from '../store';
import { errors } from '../errors';
import { mailauthResolver } from '../dns/mailauth';
import { dkimSignature } from '../mail/dkim';
import { signingKeys } from '../domains/dkim';
import { trackingBase } from '../links/tracking';
import { trackableUrl } from '../links/track-html';
import { composeEmail, sentHtml } from '../sending/message';
import { CHECKS, type DmarcFinding, type MessageFacts } from './checks';
import type { Rspamd } from './rspamd';
import { log } from '../log';

export { Rspamd, unavailable } from './rspamd';

export interface InsightsDeps {
  store: Store;
  config: Pick<Config, 'public_url' | 'spam' | 'smtp' | 'delivery'>;
  /** A caching resolver (Resolver#withCache): DMARC policies. */
  dns: Resolver;
  /** rspamd's client; null when `spam.rspamd_url` is unset. */
  spam: Rspamd | null;
}

/** The insights of one message and rspamd's verdict (null: rspamd is not configured). */
export interface Evaluation {
  insights: Insight[];
  spam: SpamVerdict | null;
}

/** A message to evaluate: an email as stored, or as prepared and not yet stored (a broadcast's sample). */
export interface Subject {
  email: EmailRec;
  content: EmailContent;
  /** Its sending domain now; null when it was deleted. */
  domain: DomainRec | null;
}

export class Insights {
  constructor(private readonly svc: InsightsDeps) {}

  /** Whether rspamd scores messages here (`spam.rspamd_url`). */
  get scoring(): boolean {
    return this.svc.spam !== null;
  }

  /**
   * The insights of a sent email: those kept, or computed now (and kept) when there are none,
   * when `refresh`, or when what was kept could not check something that may work now.
   */
  async ofEmail(team: string, id: string, opts: { refresh?: boolean } = {}): Promise<EmailInsightsRec> {
    const { store } = this.svc;
    const email = await store.emails.get(team, id);
    if (!email) throw errors.notFound('Email');
    const kept = await store.emailInsights.get(team, id);
    if (kept && !opts.refresh && !this.worthRetrying(kept)) return kept;
    const content = isSystemMail(email) ? undefined : await store.emailContent.get(team, id);
    if (!content) throw errors.notFound('Email content');
    const domain = (await store.domains.get(team, email.domain_id)) ?? null;
    const { insights, spam } = await this.evaluate({ email, content, domain });
    const rec: EmailInsightsRec = {
      id: email.id,
      team_id: team,
      created_at: email.created_at,
      scheduled_at: email.scheduled_at,
      computed_at: new Date().toISOString(),
      insights,
      spam,
    };
    await store.write(async (tx) => {
      // Gone meanwhile (retention): nothing to keep.
      if (await tx.emails.get(team, id)) tx.emailInsights.put(rec);
    });
    return rec;
  }

  /** Kept insights that could not check something (DNS or rspamd failed), or that rspamd's configuration has changed since. */
  private worthRetrying(rec: EmailInsightsRec): boolean {
    if ((rec.spam === null) !== (this.svc.spam === null)) return true;
    return rec.insights.some((i) => i.status === 'unavailable' && !(i.name === 'spam_score' && rec.spam === null));
  }

  /** Compose, sign, look up and score one message, and make its insights. Writes nothing. */
  async evaluate(subject: Subject, opts: { threshold?: number } = {}): Promise<Evaluation> {
    const { email, content, domain } = subject;
    const { config } = this.svc;
    const raw = await composeEmail(this.svc, email, content, domain);
    const [signed, dmarcFinding] = await Promise.all([this.signed(raw, domain), this.dmarcOf(email)]);
    // Scored as a receiver sees it arrive from Posthorn (EHLO smtp.hostname); the connection's own
    // checks — the sending IP's reputation, SPF for it — are not part of the score.
    const host = config.smtp.hostname;
    const spam = this.svc.spam
      ? await this.svc.spam.check(signed, { helo: host, hostname: host, from: email.from_address, rcpt: Object.keys(email.recipients) })
      : null;
    const facts = this.facts(subject, raw, dmarcFinding, spam, opts.threshold ?? config.spam.review_threshold);
    return { insights: INSIGHT_NAMES.map((name) => ({ name, ...CHECKS[name](facts) })), spam };
  }

  /** The message as delivery sends it: DKIM-Signature header(s) first (mail/dkim.ts), when the domain still exists. */
  private async signed(raw: Uint8Array, domain: DomainRec | null): Promise<Uint8Array[]> {
    if (!domain) return [raw];
    try {
      return [Buffer.from(await dkimSignature(raw, signingKeys(domain)), 'latin1'), raw];
    } catch (e) {
      // Delivery would retry such a message; scored unsigned, its DKIM rules say so.
      log.warn('insights.sign_failed', { domain: domain.name, error: String((e as Error)?.message ?? e) });
      return [raw];
    }
  }

  /** The DMARC policy that applies to the From domain (RFC 7489 §6.6.3), as a receiver discovers it. */
  private async dmarcOf(email: EmailRec): Promise<DmarcFinding> {
    try {
      const r = await dmarc({ headerFrom: email.from_address, spfDomains: [], dkimDomains: [], resolver: mailauthResolver(this.svc.dns) });
      if (!r) return { status: 'error', reason: 'the From address has no domain' };
      if (r.status.result === 'temperror') return { status: 'error', reason: (r as { error?: string }).error ?? 'a DNS lookup failed' };
      if (!r.rr || !r.policyDomain) return { status: 'none', at: r.domain };
      const policy = r.policy === 'reject' || r.policy === 'quarantine' ? r.policy : 'none';
      return { status: 'found', policy, record: r.rr, at: r.policyDomain };
    } catch (e) {
      return { status: 'error', reason: String((e as Error)?.message ?? e) };
    }
  }

  private facts(subject: Subject, raw: Uint8Array, dmarcFinding: DmarcFinding, spam: SpamVerdict | null, threshold: number): MessageFacts {
    const { email, content, domain } = subject;
    const { public_url } = this.svc.config;
    const parts = content.message;
    // (An email accepted by Posthorn 0.1 kept its message whole: its html is as stored.)
    const html = parts ? sentHtml(this.svc, email, content, parts, domain) : content.html;
    const scan = content.html === null ? { links: [], images: [] } : scanHtml(content.html);
    const tracking = parts?.tracking ?? { open: false, click: false };
    const base = new URL(domain ? trackingBase(public_url, domain) : public_url);
    const header = (name: string) => Object.keys(email.headers).some((k) => k.toLowerCase() === name);
    return {
      domain: email.domain,
      from: email.from_address,
      html: content.html,
      htmlBytes: html === null ? 0 : Buffer.byteLength(html),
      textPart: !hasTextPart(raw) ? 'none' : content.text ? 'given' : 'derived',
      links: scan.links,
      images: scan.images,
      bulk: email.broadcast_id !== null,
      listUnsubscribe: { present: header('list-unsubscribe'), oneClick: header('list-unsubscribe-post') },
      tracking,
      trackingHost: base.hostname,
      customTracking: base.hostname !== new URL(public_url).hostname,
      ownHost: new URL(public_url).hostname,
      dmarc: dmarcFinding,
      spam,
      threshold,
    };
  }
}

/** The http(s) links (`a`, `area`) and the images of an html body, read as a browser reads them. */
export function scanHtml(html: string): { links: string[]; images: { src: string; alt: boolean }[] } {
  const links: string[] = [];
  const images: { src: string; alt: boolean }[] = [];
  new HTMLRewriter()
    .on('a[href], area[href]', {
      element(el) {
        const url = trackableUrl(el.getAttribute('href') ?? '');
        if (url) links.push(url);
      },
    })
    .on('img', {
      element(el) {
        images.push({ src: el.getAttribute('src') ?? '', alt: el.hasAttribute('alt') });
      },
    })
    .transform(html);
  return { links, images };
}

/** Does the composed message have a text/plain part (a header of its own or of a part)? */
function hasTextPart(raw: Uint8Array): boolean {
  return /(?:^|\r\n)content-type:[ \t]*text\/plain/i.test(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1'));
}
