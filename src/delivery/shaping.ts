// Per-destination shaping (docs/mail.md §3.1): which *site* a recipient domain's mail goes to, how
// hard delivery may press it, and what a throttling reply does to it.
//
// Sites are data: src/delivery/sites.toml ships the large providers (Google, Microsoft, Yahoo/AOL,
// Apple, GMX/WEB.DE, Mail.ru, Yandex), `delivery.shaping` in the configuration overrides them key by
// key. A domain belongs to the site listing it, else to the site whose MX pattern matches its first
// MX host (Google Workspace domains roll up to `google` by their MX, as KumoMTA does), else it is a
// site of its own with the default limits.
//
// A throttling reply (421, a 4.7.x rate-limit reply, a site's own texts such as Microsoft's 4.7.650)
// — or a reply that is an incident of the sender (a block list, an authentication failure:
// incidents.ts) — suspends the site for its backoff — doubling with each further one up to max_backoff, stretched by
// up to 20 % so sites throttled together do not come back together — and counts a strike. Each
// unfaded strike halves the site's connections and rates; a strike fades after a backoff of quiet.
// Suspensions are kept in the store (they survive restarts and GET /queue shows them); rates are
// token buckets in memory.
import shipped from './sites.toml';
import { parseSiteTable, type Config, type SiteLimits, type SiteRuleConfig } from '../config';
import { enhancedCode, type Reply } from '../mail/smtp-reply';
import type { SiteState } from '../store';
import { DEFAULT_POOL } from './pool';

/** A site with every limit filled in. */
interface SiteRule extends SiteLimits {
  domains: string[];
  mx: string[];
  /** A per-site route: the smarthost its mail goes through instead of its MX hosts (README "Sending IPs and warm-up"). */
  relay?: string;
}

const SHIPPED_DEFAULT = parseSiteTable('sites.toml default', (shipped as Record<string, unknown>).default, false) as SiteLimits;
const SHIPPED_SITES: Record<string, SiteRuleConfig> = Object.fromEntries(
  Object.entries(((shipped as Record<string, unknown>).sites ?? {}) as Record<string, unknown>).map(([name, t]) => [
    name,
    parseSiteTable(`sites.toml sites.${name}`, t, true),
  ]),
);

/** `name` or a `*.suffix` pattern matching it, looked up in `map` (most specific first). */
function lookup(map: Map<string, string>, name: string): string | null {
  const exact = map.get(name);
  if (exact !== undefined) return exact;
  for (let i = name.indexOf('.'); i >= 0; i = name.indexOf('.', i + 1)) {
    const hit = map.get(`*${name.slice(i)}`);
    if (hit !== undefined) return hit;
  }
  return null;
}

/** The provider of mail to a domain no named site covers (SiteRules.provider). */
export const OTHER_PROVIDER = 'other';

/** The sites in force: shipped ones overridden and completed by the configuration. */
export class SiteRules {
  readonly defaults: SiteLimits;
  private readonly sites = new Map<string, SiteRule>();
  private readonly byDomain = new Map<string, string>();
  private readonly byMx = new Map<string, string>();

  constructor(shaping: Pick<Config['delivery']['shaping'], 'default' | 'sites'>) {
    this.defaults = { ...SHIPPED_DEFAULT, ...shaping.default };
    const names = new Set([...Object.keys(SHIPPED_SITES), ...Object.keys(shaping.sites)]);
    // Shipped sites first: a configured site claiming the same domain or MX pattern wins.
    for (const configured of [false, true])
      for (const name of names) {
        const own = { ...SHIPPED_SITES[name], ...shaping.sites[name] };
        if (configured !== name in shaping.sites) continue;
        const rule: SiteRule = { ...this.defaults, domains: [], mx: [], ...own };
        this.sites.set(name, rule);
        for (const d of rule.domains) this.byDomain.set(d, name);
        for (const m of rule.mx) this.byMx.set(m, name);
      }
  }

  /** The site that lists this recipient domain, or null. */
  siteOfDomain(domain: string): string | null {
    return lookup(this.byDomain, domain);
  }

  /** The site whose MX patterns match this host, or null. */
  siteOfMx(host: string): string | null {
    return lookup(this.byMx, host.toLowerCase());
  }

  /** The smarthost a site's mail goes through (its `relay`), or undefined: its MX hosts. */
  relay(site: string): string | undefined {
    return this.sites.get(site)?.relay;
  }

  /** A site's limits (a domain that is a site of its own: the defaults). */
  limits(site: string): SiteLimits {
    return this.sites.get(site) ?? this.defaults;
  }

  /**
   * The mailbox provider mail to `domain` counts under (metrics by site, docs/api.md §7.9; operator
   * metrics): `site`, the shaping site, when a named site (sites.toml, the configuration); else the
   * site listing the domain or matching `mx`, the MX host (shaping off, a relay); else `other` — a
   * domain that is a site of its own is not a provider worth a row (nor a metric label) of its own.
   */
  provider(site: string, domain: string, mx?: string | null): string {
    if (this.sites.has(site)) return site;
    return this.siteOfDomain(domain) ?? (mx ? this.siteOfMx(mx) : null) ?? OTHER_PROVIDER;
  }

  /** Every named site (docs, tests). */
  names(): string[] {
    return [...this.sites.keys()];
  }
}

/** Words of rate-limiting 4.7.x replies (RFC 3463 X.7: security or policy status). */
const RATE_WORDS = /\b(rate|throttl\w*|too many|too much|volume|limit\w*|deferred|try (again )?later|come back later)\b/i;

/**
 * Is this reply the destination slowing us down (not a verdict on one recipient)? 421 (the
 * service closes the channel, RFC 5321 §4.2.3), a 4.7.x reply that speaks of rates or volume, or a
 * reply carrying one of the site's own throttling texts. Replies Posthorn made up never are.
 */
export function isThrottling(reply: Reply, limits: Pick<SiteLimits, 'throttle_replies'>): boolean {
  if (reply.local || reply.code < 400 || reply.code >= 500) return false;
  if (reply.code === 421) return true;
  if (enhancedCode(reply)?.startsWith('4.7.') && RATE_WORDS.test(reply.text)) return true;
  const text = reply.text.toLowerCase();
  return limits.throttle_replies.some((t) => text.includes(t));
}

/**
 * How many more attempts a site may start now (`n`); when none, until when its entries should wait
 * out of the queue's way (`until`: a suspension, a long rate wait) or null (room comes soon).
 */
export interface Room {
  n: number;
  until: number | null;
}

/** Rate waits shorter than this are passed over in the queue; longer ones move the entries. */
const DEFER_MS = 2_000;
/** Domains whose site was learned from their MX, kept at most (the oldest go first). */
const LEARNED_MAX = 100_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** The shaping state of the delivery engine: which site each domain is, and how much room each site has. */
export class Shaper {
  private readonly learned = new Map<string, string>();
  private states = new Map<string, SiteState>();
  private readonly buckets = new Map<string, { minute: Bucket; hour: Bucket }>();

  constructor(
    readonly rules: SiteRules,
    /** Off (`delivery.shaping.enabled = false`, or relay mode): every domain is its own site with the pool's defaults. */
    readonly enabled: boolean,
    private readonly random: () => number = Math.random,
  ) {}

  /** The site of a recipient domain as known now: learned from its MX, listed by a site, or itself. */
  siteOf(domain: string): string {
    if (!this.enabled) return domain;
    return this.learned.get(domain) ?? this.rules.siteOfDomain(domain) ?? domain;
  }

  /** The site of a domain once its MX hosts are known (the first is the one matched). */
  siteOfRoute(domain: string, hosts: string[]): string {
    if (!this.enabled) return domain;
    const site = this.rules.siteOfDomain(domain) ?? (hosts.length ? this.rules.siteOfMx(hosts[0]) : null) ?? domain;
    this.learn(domain, site);
    return site;
  }

  /** Remember a domain's site (from its MX now, or as a queue entry recorded it). */
  learn(domain: string, site: string): void {
    if (!this.enabled || this.learned.get(domain) === site) return;
    this.learned.delete(domain);
    if (this.learned.size >= LEARNED_MAX) this.learned.delete(this.learned.keys().next().value!);
    this.learned.set(domain, site);
  }

  knows(domain: string): boolean {
    return this.learned.has(domain);
  }

  /** The store's site states (read at each claim): suspensions lifted or set by the other thread count at once. */
  sync(states: SiteState[]): void {
    this.states = new Map(states.map((s) => [s.site, s]));
  }

  /** A state this thread has just committed. */
  apply(change: SiteChange): void {
    if (change.put) this.states.set(change.put.site, change.put);
    else this.states.delete(change.remove);
  }

  state(site: string): SiteState | undefined {
    return this.states.get(site);
  }

  /** Strikes of a site not faded by `now`: one fades per backoff of quiet after its suspension. */
  strikes(site: string, now: number): number {
    const st = this.states.get(site);
    if (!st) return 0;
    const quietSince = Math.max(st.suspended_until ?? 0, st.throttled_at);
    const faded = now > quietSince ? Math.floor((now - quietSince) / this.rules.limits(site).backoff) : 0;
    return Math.max(0, st.strikes - faded);
  }

  /** The limits a site has now: its own, halved for each unfaded strike. */
  limits(site: string, now: number): Pick<SiteLimits, 'max_connections' | 'messages_per_connection' | 'messages_per_minute' | 'messages_per_hour'> {
    if (!this.enabled)
      return { max_connections: DEFAULT_POOL.perDestination, messages_per_connection: DEFAULT_POOL.maxMessages, messages_per_minute: 0, messages_per_hour: 0 };
    const own = this.rules.limits(site);
    const k = 2 ** this.strikes(site, now);
    const slow = (n: number) => (n === 0 ? 0 : Math.max(1, Math.floor(n / k)));
    return {
      max_connections: slow(own.max_connections),
      messages_per_connection: own.messages_per_connection,
      messages_per_minute: slow(own.messages_per_minute),
      messages_per_hour: slow(own.messages_per_hour),
    };
  }

  /** Is the site suspended at `now`? */
  suspended(site: string, now: number): number | null {
    const until = this.enabled ? this.states.get(site)?.suspended_until : null;
    return until && until > now ? until : null;
  }

  /**
   * How many more attempts for `site` may start now, with `inFlight` of its attempts running: none
   * while it is suspended; at most two per allowed connection in flight (one behind each
   * connection keeps it busy; more would only wait); no more than its rates allow.
   */
  room(site: string, now: number, inFlight: number): Room {
    const until = this.suspended(site, now);
    if (until) return { n: 0, until };
    const lim = this.limits(site, now);
    const n = lim.max_connections * 2 - inFlight;
    if (n <= 0 || (!lim.messages_per_minute && !lim.messages_per_hour)) return { n: Math.max(0, n), until: null };
    const wait = this.rateWait(site, lim, now);
    if (wait > 0) return { n: 0, until: wait > DEFER_MS ? now + wait : null };
    const b = this.bucketsOf(site, lim, now);
    const tokens = Math.floor(Math.min(lim.messages_per_minute ? b.minute.tokens : Infinity, lim.messages_per_hour ? b.hour.tokens : Infinity));
    return { n: Math.min(n, tokens), until: null };
  }

  /** ms until the site's rates allow one more message (0: now or no rate). */
  waitFor(site: string, now: number): number {
    return this.rateWait(site, this.limits(site, now), now);
  }

  /** An attempt for `site` starts: it uses one message of each of its rates. */
  take(site: string, now: number): void {
    const lim = this.limits(site, now);
    if (!lim.messages_per_minute && !lim.messages_per_hour) return;
    const b = this.bucketsOf(site, lim, now);
    b.minute.tokens -= 1;
    b.hour.tokens -= 1;
  }

  /**
   * When an entry passed over for `until` should come back: a suspension's end plus a random part
   * of a spread (up to a fifth of the suspension, at most a minute), so a site's backlog returns
   * over a while, not all in its first second; a rate's wait, one message interval apart per entry.
   */
  spread(site: string, until: number, now: number, nth: number): number {
    const st = this.states.get(site);
    if (st?.suspended_until === until) return until + Math.round(this.random() * Math.min(60_000, Math.max(1_000, (until - now) / 5)));
    const lim = this.limits(site, now);
    const perMs = Math.min(
      lim.messages_per_minute ? lim.messages_per_minute / 60_000 : Infinity,
      lim.messages_per_hour ? lim.messages_per_hour / 3_600_000 : Infinity,
    );
    return until + Math.round(nth / perMs);
  }

  /**
   * What an attempt's replies do to its site: a throttling reply, or `sender` — a reply that is an
   * incident of the sender (incidents.ts) — suspends it (unless it is suspended already: the other
   * attempts in flight then get the same answer) and adds a strike; a delivery once every strike
   * has faded ends its state. The change is stored by the caller and applied here once committed
   * (`apply`).
   */
  outcome(site: string, replies: Reply[], now: number, sender: Reply | null = null): SiteChange | null {
    if (!this.enabled) return null;
    const own = this.rules.limits(site);
    const st = this.states.get(site);
    const throttle = replies.find((r) => isThrottling(r, own)) ?? sender;
    if (throttle) {
      if (st?.suspended_until && st.suspended_until > now) return null;
      const strikes = this.strikes(site, now) + 1;
      const wait = Math.min(own.backoff * 2 ** (strikes - 1), own.max_backoff) * (1 + 0.2 * this.random());
      return { put: { site, suspended_until: Math.round(now + wait), strikes, throttled_at: now, reply: throttle.text } };
    }
    if (st && this.strikes(site, now) === 0 && !(st.suspended_until && st.suspended_until > now) && replies.some((r) => r.code < 300)) return { remove: site };
    return null;
  }

  private bucketsOf(site: string, lim: { messages_per_minute: number; messages_per_hour: number }, now: number) {
    let b = this.buckets.get(site);
    if (!b) {
      b = { minute: { tokens: lim.messages_per_minute, at: now }, hour: { tokens: lim.messages_per_hour, at: now } };
      this.buckets.set(site, b);
    }
    refill(b.minute, lim.messages_per_minute, 60_000, now);
    refill(b.hour, lim.messages_per_hour, 3_600_000, now);
    return b;
  }

  /** ms until the site's rates allow one more message (0: now). */
  private rateWait(site: string, lim: { messages_per_minute: number; messages_per_hour: number }, now: number): number {
    if (!this.enabled || (!lim.messages_per_minute && !lim.messages_per_hour)) return 0;
    const b = this.bucketsOf(site, lim, now);
    const wait = (bucket: Bucket, limit: number, period: number) => (limit && bucket.tokens < 1 ? Math.ceil(((1 - bucket.tokens) * period) / limit) : 0);
    return Math.max(wait(b.minute, lim.messages_per_minute, 60_000), wait(b.hour, lim.messages_per_hour, 3_600_000));
  }
}

/** A change to a site's stored state. */
export type SiteChange = { put: SiteState; remove?: undefined } | { remove: string; put?: undefined };

/** Token bucket: `limit` per `period`, refilled continuously, never above `limit` (a slowed site's lower one too). */
function refill(b: Bucket, limit: number, period: number, now: number): void {
  if (!limit) return;
  b.tokens = Math.min(limit, b.tokens + ((now - b.at) * limit) / period);
  b.at = now;
}
