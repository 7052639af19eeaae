// Configuration: a TOML file (--config PATH or POSTHORN_CONFIG) overlaid by POSTHORN_* environment
// variables, validated once at start-up. Every key is documented in config.example.toml; a bad value
// stops start-up with a message naming the key (README, "Configuration").
import { readFileSync, existsSync } from 'node:fs';
import { isIP } from 'node:net';

export interface Config {
  data_dir: string;
  /** Unset: the embedded LMDB store in data_dir. `postgres://…`: the PostgreSQL store (cluster mode). */
  database: { url: string | null };
  public_url: string;
  http: {
    host: string;
    port: number;
    tls_cert: string | null;
    tls_key: string | null;
    /** Reverse proxies whose `X-Forwarded-For` is believed (addresses and CIDR ranges); empty: none (net/client-address.ts). */
    trusted_proxies: string[];
  };
  smtp: {
    host: string;
    hostname: string;
    username: string;
    starttls_ports: number[];
    tls_ports: number[];
    tls_cert: string | null;
    tls_key: string | null;
    /** Open SMTP sessions across every listener; past it `421 4.7.0` at once. */
    max_connections: number;
    /** Accept bare CR/LF as line endings (RFC 5321 §2.3.8 says no; legacy senders). */
    allow_bare_newlines: boolean;
    /** ms before the greeting; a client talking sooner is refused as an early talker. 0 = greet at once. */
    greeting_delay: number;
  };
  dns: { servers: string[] };
  /**
   * Certificates by ACME (RFC 8555, docs/mail.md §4, "Certificates by ACME"): with `acme.enabled`, Posthorn obtains and
   * renews the certificate of the `public_url` host and `smtp.hostname` from `acme.directory`
   * (HTTP-01 on the HTTP listener), keeps it in the store and serves it on the SMTP listeners and
   * on `acme.https_ports`. `terms_agreed` is the operator's agreement to the CA's terms of service.
   */
  tls: {
    acme: {
      enabled: boolean;
      directory: string;
      email: string | null;
      ca_file: string | null;
      terms_agreed: boolean;
      https_ports: number[];
    };
  };
  delivery: {
    mode: 'direct' | 'relay';
    relay_url: string | null;
    mx_port: number;
    retry_schedule: number[];
    retry_window: number;
    /** Per-destination shaping (docs/mail.md §3.1): over the rules shipped in src/delivery/sites.toml. */
    shaping: { enabled: boolean; default: Partial<SiteLimits>; sites: Record<string, SiteRuleConfig> };
    /**
     * Bounce classes (README.md, "Bounce classes and incidents"): overrides of the rules shipped in
     * src/mail/bounce-classes.toml, key by key — checked by mail/bounce-class.ts when the services start.
     */
    bounce_classes: Record<string, unknown>;
    /**
     * Outbound MTA-STS (RFC 8461, docs/mail.md §3.2): policies looked up and applied in direct
     * mode; `ca_file` adds trusted authorities (PEM) for policy hosts and MX certificates; `port`
     * is where policy hosts are asked (443, RFC 8461 §3.3 — another value only for tests).
     */
    mta_sts: { enabled: boolean; ca_file: string | null; port: number };
    /** Resend's test addresses are simulated, never sent (docs/api.md §7.11); false: ordinary addresses. */
    sandbox: boolean;
    /**
     * The sender id of the `Feedback-ID` header (Gmail's feedback loop, README "Deliverability"):
     * set, every message carries `Feedback-ID: <campaign>:<team>:<domain>:<this>`; null: none.
     */
    feedback_id: string | null;
    /**
     * Sending IPs (README "Sending IPs and warm-up"): the addresses outgoing connections bind to,
     * each with its EHLO name, its pool, its weight in the pool and its warm-up schedule. Empty: the
     * kernel chooses the address and EHLO is `smtp.hostname`, as before.
     */
    ips: SendingIpConfig[];
    /** Warm-up ramps (README "Sending IPs and warm-up"): first day's allowance per address × site, and its daily growth. */
    warmup: { new_daily: number; new_growth: number; established_daily: number; established_growth: number };
  };
  /**
   * Cluster mode (README "Cluster mode", "Regions"): this node's region (null: the one implicit
   * region) and the regions the operator defines besides Resend's names, which domains may name.
   */
  cluster: { region: string | null; regions: string[] };
  /**
   * Per team: requests per second (docs/api.md §6); emails accepted per clock hour and per UTC
   * day, 0 = no limit (docs/api.md §6.1).
   */
  limits: { requests_per_second: number; session_requests_per_second: number; emails_per_hour: number; emails_per_day: number };
  /** After a DKIM rotation, how long the retired selectors stay listed before they are safe to remove (ms). */
  dkim: { rotation_grace: number };
  retention: { days: number };
  security: { allow_private_networks: boolean };
  /**
   * The doctor's checks (docs/deliverability.md): how often `serve` runs them (ms), the DNS
   * blocklists asked about the sending addresses and domains, and an MX to test outbound port 25
   * against (`host` or `host:port`; unset: that check is skipped with a warning).
   */
  deliverability: {
    check_interval: number;
    /** The public addresses mail leaves from; empty: the interfaces' public addresses (docs/deliverability.md §1.2). */
    sending_addresses: string[];
    dnsbl: { ip_zones: string[]; domain_zones: string[]; spamhaus_dqs_key: string | null };
    port25_probe: string | null;
    /**
     * The address DMARC aggregate reports go to (docs/deliverability.md §4): the `rua` of the
     * recommended DMARC record. Unset: `dmarc-reports@<return-path host>` of each domain.
     */
    dmarc_rua: string | null;
    /**
     * The address TLS-RPT reports are sent from (docs/deliverability.md §5), at a verified sending
     * domain; its team sends them. Unset: no TLS-RPT reports are mailed or posted.
     */
    tlsrpt_from: string | null;
  };
  webhooks: { retry_schedule: number[] };
  tracking: { prefetch_window: number };
  /**
   * Spam scoring with rspamd (README "Deliverability", "Spam score (rspamd)"): off while
   * `rspamd_url` is unset; `timeout` bounds each check (ms); a broadcast whose sample scores
   * `review_threshold` or more is held for review (docs/api.md §13.6).
   */
  spam: { rspamd_url: string | null; timeout: number; review_threshold: number };
  /**
   * The Inbox Agent (docs/api.md §25.10): the operator's model behind an OpenAI-compatible
   * chat-completions endpoint (`url`, its base such as http://127.0.0.1:11434/v1; `model`; `api_key`
   * sent as a bearer token). Off while `url` is unset. `timeout_ms` bounds one run's request;
   * `daily_budget` is the runs (requests to the model) each team may make per UTC day, 0 = no limit.
   */
  agent: { url: string | null; model: string | null; api_key: string | null; timeout_ms: number; daily_budget: number };
  metrics: { token: string | null };
  auth: {
    /** Idle and absolute session lifetimes, ms. */
    session_idle_timeout: number;
    session_lifetime: number;
    oidc: { issuer: string | null; client_id: string | null; client_secret: string | null; allowed_domains: string[] };
    /**
     * The sender of Posthorn's own mail to dashboard users (invitations, password resets, email
     * changes; README "Security", "Mail Posthorn sends itself"): unset → `posthorn@<smtp.hostname>`.
     */
    system_from: string;
  };
}

export class ConfigError extends Error {
  constructor(
    public key: string,
    message: string,
  ) {
    super(`config: \`${key}\` ${message}`);
  }
}

/**
 * The DNS blocklists checked by default (docs/deliverability.md §3 names each one's terms of use):
 * widely used by receivers, free to query at a single server's volume.
 */
export const DEFAULT_IP_ZONES = ['zen.spamhaus.org', 'b.barracudacentral.org', 'bl.spamcop.net', 'psbl.surriel.com', 'bl.mailspike.net'];
export const DEFAULT_DOMAIN_ZONES = ['dbl.spamhaus.org', 'multi.uribl.com', 'multi.surbl.org'];

/** Let's Encrypt's production ACME directory (RFC 8555 §7.1.1), `tls.acme.directory`'s default. */
export const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory';

/** Default delivery waits: exponential-ish backoff whose sum reaches the 72 h retry window. */
export const DEFAULT_DELIVERY_RETRY = '5m,10m,30m,1h,2h,4h,8h,8h,8h,8h,8h,8h,8h,8h';
export const DEFAULT_WEBHOOK_RETRY = '5s,5m,30m,2h,5h,10h,10h';

/** One sending IP of `delivery.ips` (README "Sending IPs and warm-up"). */
export interface SendingIpConfig {
  address: string;
  /** The EHLO name said from it; it must forward-confirm (the doctor's reverse DNS check). */
  ehlo: string;
  pool: string;
  /** Its share of its pool's new connections, against the others' weights. */
  weight: number;
  /** Its warm-up ramp when it first sends (`new`, `established`), or none. */
  warmup: 'new' | 'established' | null;
}

/** How hard delivery may press one destination site (docs/mail.md §3.1). */
export interface SiteLimits {
  /** Connections open at once to the site. */
  max_connections: number;
  /** Messages sent over one connection before it is closed and replaced. */
  messages_per_connection: number;
  /** Messages per minute and per hour; 0 = no limit. */
  messages_per_minute: number;
  messages_per_hour: number;
  /** ms the site is suspended after its first throttling reply, doubling with each further one up to `max_backoff`. */
  backoff: number;
  max_backoff: number;
  /** Texts (case-insensitive) that make a 4xx reply a throttling reply, besides the generic ones. */
  throttle_replies: string[];
}

/** A site: the destinations it covers — by recipient domain or by MX host — and any limits of its own. */
export interface SiteRuleConfig extends Partial<SiteLimits> {
  /** Recipient domains (`gmail.com`, `*.example.com`). */
  domains?: string[];
  /** MX host patterns (`*.google.com`, `mx.example.net`). */
  mx?: string[];
  /** A per-site route: the site's mail goes through this smarthost (smtp:// or smtps:// URL) instead of its MX hosts. */
  relay?: string;
}

const SITE_INTS: Record<string, [number, number]> = {
  max_connections: [1, 1000],
  messages_per_connection: [1, 1_000_000],
  messages_per_minute: [0, 10_000_000],
  messages_per_hour: [0, 1_000_000_000],
};
const SITE_DURATIONS = ['backoff', 'max_backoff'];
const HOST_PATTERN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * One site table of `delivery.shaping` (or of the shipped src/delivery/sites.toml): limits, and with
 * `match` the domains and MX patterns it covers. Throws ConfigError naming the bad key under `key`.
 */
export function parseSiteTable(key: string, raw: unknown, match: boolean): SiteRuleConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(key, 'must be a table');
  const out: SiteRuleConfig = {};
  const strings = (k: string, v: unknown): string[] => {
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.trim() === '')) throw new ConfigError(`${key}.${k}`, 'must be a list of strings');
    return (v as string[]).map((x) => x.trim().toLowerCase().replace(/\.$/, ''));
  };
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (k in SITE_INTS) {
      const [min, max] = SITE_INTS[k];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
        throw new ConfigError(`${key}.${k}`, `must be an integer between ${min} and ${max} (got ${JSON.stringify(v)})`);
      (out as Record<string, number>)[k] = v;
    } else if (SITE_DURATIONS.includes(k)) {
      const ms = typeof v === 'string' ? parseDuration(v) : null;
      if (ms === null || ms < 100) throw new ConfigError(`${key}.${k}`, `must be a duration such as 1m or 30s (got ${JSON.stringify(v)})`);
      (out as Record<string, number>)[k] = ms;
    } else if (k === 'throttle_replies') {
      out.throttle_replies = strings(k, v);
    } else if (match && k === 'relay') {
      if (typeof v !== 'string' || !/^smtps?:\/\/[^/]+/.test(v)) throw new ConfigError(`${key}.relay`, 'must be an smtp:// or smtps:// URL');
      out.relay = v;
    } else if (match && (k === 'domains' || k === 'mx')) {
      const list = strings(k, v);
      for (const d of list)
        if (!HOST_PATTERN.test(d)) throw new ConfigError(`${key}.${k}`, `must list names such as example.com or *.example.com (got ${JSON.stringify(d)})`);
      out[k] = list;
    } else throw new ConfigError(`${key}.${k}`, 'is not a known site setting (see config.example.toml)');
  }
  if (out.backoff !== undefined && out.max_backoff !== undefined && out.max_backoff < out.backoff)
    throw new ConfigError(`${key}.max_backoff`, 'must not be shorter than `backoff`');
  return out;
}

type Kind =
  | 'string'
  | 'nullable'
  | 'domains'
  | 'ranges'
  | 'port'
  | 'ports'
  | 'int'
  | 'number'
  | 'bool'
  | 'url'
  | 'servers'
  | 'duration'
  | 'durations'
  | 'enum'
  | 'site'
  | 'sites'
  | 'ips'
  | 'names'
  | 'table';
interface KeyDef {
  key: string; // dotted TOML key
  env: string;
  kind: Kind;
  default: unknown;
  values?: string[]; // for enum
  min?: number;
  max?: number;
}

/** The operational contract (config.example.toml) — names are fixed, other tools depend on them. */
export const KEYS: KeyDef[] = [
  { key: 'data_dir', env: 'POSTHORN_DATA_DIR', kind: 'string', default: './data' },
  { key: 'database.url', env: 'POSTHORN_DATABASE_URL', kind: 'nullable', default: null },
  { key: 'public_url', env: 'POSTHORN_PUBLIC_URL', kind: 'url', default: 'http://localhost:3000' },
  { key: 'http.host', env: 'POSTHORN_HTTP_HOST', kind: 'string', default: '0.0.0.0' },
  { key: 'http.port', env: 'POSTHORN_HTTP_PORT', kind: 'port', default: 3000 },
  { key: 'http.tls_cert', env: 'POSTHORN_HTTP_TLS_CERT', kind: 'nullable', default: null },
  { key: 'http.tls_key', env: 'POSTHORN_HTTP_TLS_KEY', kind: 'nullable', default: null },
  { key: 'http.trusted_proxies', env: 'POSTHORN_HTTP_TRUSTED_PROXIES', kind: 'ranges', default: [] },
  { key: 'smtp.host', env: 'POSTHORN_SMTP_HOST', kind: 'string', default: '0.0.0.0' },
  { key: 'smtp.hostname', env: 'POSTHORN_SMTP_HOSTNAME', kind: 'string', default: 'localhost' },
  { key: 'smtp.username', env: 'POSTHORN_SMTP_USERNAME', kind: 'string', default: 'resend' },
  { key: 'smtp.starttls_ports', env: 'POSTHORN_SMTP_STARTTLS_PORTS', kind: 'ports', default: [25, 587, 2587] },
  { key: 'smtp.tls_ports', env: 'POSTHORN_SMTP_TLS_PORTS', kind: 'ports', default: [465, 2465] },
  { key: 'smtp.tls_cert', env: 'POSTHORN_SMTP_TLS_CERT', kind: 'nullable', default: null },
  { key: 'smtp.tls_key', env: 'POSTHORN_SMTP_TLS_KEY', kind: 'nullable', default: null },
  { key: 'smtp.max_connections', env: 'POSTHORN_SMTP_MAX_CONNECTIONS', kind: 'int', default: 1000, min: 1, max: 1_000_000 },
  { key: 'smtp.allow_bare_newlines', env: 'POSTHORN_SMTP_ALLOW_BARE_NEWLINES', kind: 'bool', default: false },
  { key: 'smtp.greeting_delay', env: 'POSTHORN_SMTP_GREETING_DELAY', kind: 'duration', default: '0s', min: 0, max: 300_000 },
  { key: 'dns.servers', env: 'POSTHORN_DNS_SERVERS', kind: 'servers', default: [] },
  { key: 'tls.acme.enabled', env: 'POSTHORN_TLS_ACME_ENABLED', kind: 'bool', default: false },
  { key: 'tls.acme.directory', env: 'POSTHORN_TLS_ACME_DIRECTORY', kind: 'url', default: LETS_ENCRYPT_DIRECTORY },
  { key: 'tls.acme.email', env: 'POSTHORN_TLS_ACME_EMAIL', kind: 'nullable', default: null },
  { key: 'tls.acme.ca_file', env: 'POSTHORN_TLS_ACME_CA_FILE', kind: 'nullable', default: null },
  { key: 'tls.acme.terms_agreed', env: 'POSTHORN_TLS_ACME_TERMS_AGREED', kind: 'bool', default: false },
  { key: 'tls.acme.https_ports', env: 'POSTHORN_TLS_ACME_HTTPS_PORTS', kind: 'ports', default: [443] },
  { key: 'delivery.mode', env: 'POSTHORN_DELIVERY_MODE', kind: 'enum', values: ['direct', 'relay'], default: 'direct' },
  { key: 'delivery.relay_url', env: 'POSTHORN_DELIVERY_RELAY_URL', kind: 'nullable', default: null },
  { key: 'delivery.mx_port', env: 'POSTHORN_DELIVERY_MX_PORT', kind: 'port', default: 25, min: 1 },
  { key: 'delivery.retry_schedule', env: 'POSTHORN_DELIVERY_RETRY_SCHEDULE', kind: 'durations', default: DEFAULT_DELIVERY_RETRY },
  { key: 'delivery.retry_window', env: 'POSTHORN_DELIVERY_RETRY_WINDOW', kind: 'duration', default: '72h' },
  { key: 'delivery.shaping.enabled', env: 'POSTHORN_DELIVERY_SHAPING_ENABLED', kind: 'bool', default: true },
  { key: 'delivery.shaping.default', env: 'POSTHORN_DELIVERY_SHAPING_DEFAULT', kind: 'site', default: {} },
  { key: 'delivery.shaping.sites', env: 'POSTHORN_DELIVERY_SHAPING_SITES', kind: 'sites', default: {} },
  { key: 'delivery.bounce_classes', env: 'POSTHORN_DELIVERY_BOUNCE_CLASSES', kind: 'table', default: {} },
  { key: 'delivery.mta_sts.enabled', env: 'POSTHORN_DELIVERY_MTA_STS_ENABLED', kind: 'bool', default: true },
  { key: 'delivery.mta_sts.ca_file', env: 'POSTHORN_DELIVERY_MTA_STS_CA_FILE', kind: 'nullable', default: null },
  { key: 'delivery.mta_sts.port', env: 'POSTHORN_DELIVERY_MTA_STS_PORT', kind: 'port', default: 443, min: 1 },
  { key: 'delivery.sandbox', env: 'POSTHORN_DELIVERY_SANDBOX', kind: 'bool', default: true },
  { key: 'delivery.feedback_id', env: 'POSTHORN_DELIVERY_FEEDBACK_ID', kind: 'nullable', default: null },
  { key: 'delivery.ips', env: 'POSTHORN_DELIVERY_IPS', kind: 'ips', default: [] },
  { key: 'delivery.warmup.new_daily', env: 'POSTHORN_DELIVERY_WARMUP_NEW_DAILY', kind: 'int', default: 150, min: 1, max: 1_000_000_000 },
  { key: 'delivery.warmup.new_growth', env: 'POSTHORN_DELIVERY_WARMUP_NEW_GROWTH', kind: 'number', default: 1.4, min: 1, max: 10 },
  { key: 'delivery.warmup.established_daily', env: 'POSTHORN_DELIVERY_WARMUP_ESTABLISHED_DAILY', kind: 'int', default: 1000, min: 1, max: 1_000_000_000 },
  { key: 'delivery.warmup.established_growth', env: 'POSTHORN_DELIVERY_WARMUP_ESTABLISHED_GROWTH', kind: 'number', default: 1.5, min: 1, max: 10 },
  { key: 'cluster.region', env: 'POSTHORN_CLUSTER_REGION', kind: 'nullable', default: null },
  { key: 'cluster.regions', env: 'POSTHORN_CLUSTER_REGIONS', kind: 'names', default: [] },
  { key: 'dkim.rotation_grace', env: 'POSTHORN_DKIM_ROTATION_GRACE', kind: 'duration', default: '7d', min: 0 },
  { key: 'limits.requests_per_second', env: 'POSTHORN_LIMITS_REQUESTS_PER_SECOND', kind: 'int', default: 10, min: 1, max: 1_000_000 },
  { key: 'limits.session_requests_per_second', env: 'POSTHORN_LIMITS_SESSION_REQUESTS_PER_SECOND', kind: 'int', default: 50, min: 1, max: 1_000_000 },
  { key: 'limits.emails_per_hour', env: 'POSTHORN_LIMITS_EMAILS_PER_HOUR', kind: 'int', default: 0, min: 0, max: 1_000_000_000 },
  { key: 'limits.emails_per_day', env: 'POSTHORN_LIMITS_EMAILS_PER_DAY', kind: 'int', default: 0, min: 0, max: 1_000_000_000 },
  { key: 'retention.days', env: 'POSTHORN_RETENTION_DAYS', kind: 'int', default: 30, min: 1, max: 3650 },
  { key: 'security.allow_private_networks', env: 'POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS', kind: 'bool', default: false },
  { key: 'deliverability.check_interval', env: 'POSTHORN_DELIVERABILITY_CHECK_INTERVAL', kind: 'duration', default: '1h', min: 60_000 },
  { key: 'deliverability.sending_addresses', env: 'POSTHORN_DELIVERABILITY_SENDING_ADDRESSES', kind: 'ranges', default: [] },
  { key: 'deliverability.dnsbl.ip_zones', env: 'POSTHORN_DELIVERABILITY_DNSBL_IP_ZONES', kind: 'domains', default: DEFAULT_IP_ZONES },
  { key: 'deliverability.dnsbl.domain_zones', env: 'POSTHORN_DELIVERABILITY_DNSBL_DOMAIN_ZONES', kind: 'domains', default: DEFAULT_DOMAIN_ZONES },
  { key: 'deliverability.dnsbl.spamhaus_dqs_key', env: 'POSTHORN_DELIVERABILITY_DNSBL_SPAMHAUS_DQS_KEY', kind: 'nullable', default: null },
  { key: 'deliverability.port25_probe', env: 'POSTHORN_DELIVERABILITY_PORT25_PROBE', kind: 'nullable', default: null },
  { key: 'deliverability.dmarc_rua', env: 'POSTHORN_DELIVERABILITY_DMARC_RUA', kind: 'nullable', default: null },
  { key: 'deliverability.tlsrpt_from', env: 'POSTHORN_DELIVERABILITY_TLSRPT_FROM', kind: 'nullable', default: null },
  { key: 'webhooks.retry_schedule', env: 'POSTHORN_WEBHOOKS_RETRY_SCHEDULE', kind: 'durations', default: DEFAULT_WEBHOOK_RETRY },
  { key: 'tracking.prefetch_window', env: 'POSTHORN_TRACKING_PREFETCH_WINDOW', kind: 'duration', default: '5s', min: 0 },
  { key: 'spam.rspamd_url', env: 'POSTHORN_SPAM_RSPAMD_URL', kind: 'nullable', default: null },
  { key: 'spam.timeout', env: 'POSTHORN_SPAM_TIMEOUT', kind: 'duration', default: '5s', min: 100, max: 60_000 },
  { key: 'spam.review_threshold', env: 'POSTHORN_SPAM_REVIEW_THRESHOLD', kind: 'number', default: 5, min: -1000, max: 1000 },
  { key: 'agent.url', env: 'POSTHORN_AGENT_URL', kind: 'nullable', default: null },
  { key: 'agent.model', env: 'POSTHORN_AGENT_MODEL', kind: 'nullable', default: null },
  { key: 'agent.api_key', env: 'POSTHORN_AGENT_API_KEY', kind: 'nullable', default: null },
  { key: 'agent.timeout_ms', env: 'POSTHORN_AGENT_TIMEOUT_MS', kind: 'int', default: 60_000, min: 1000, max: 600_000 },
  { key: 'agent.daily_budget', env: 'POSTHORN_AGENT_DAILY_BUDGET', kind: 'int', default: 200, min: 0, max: 1_000_000_000 },
  { key: 'metrics.token', env: 'POSTHORN_METRICS_TOKEN', kind: 'nullable', default: null },
  { key: 'auth.session_idle_timeout', env: 'POSTHORN_AUTH_SESSION_IDLE_TIMEOUT', kind: 'duration', default: '12h', min: 60_000 },
  { key: 'auth.session_lifetime', env: 'POSTHORN_AUTH_SESSION_LIFETIME', kind: 'duration', default: '7d', min: 60_000 },
  { key: 'auth.oidc.issuer', env: 'POSTHORN_AUTH_OIDC_ISSUER', kind: 'nullable', default: null },
  { key: 'auth.oidc.client_id', env: 'POSTHORN_AUTH_OIDC_CLIENT_ID', kind: 'nullable', default: null },
  { key: 'auth.oidc.client_secret', env: 'POSTHORN_AUTH_OIDC_CLIENT_SECRET', kind: 'nullable', default: null },
  { key: 'auth.oidc.allowed_domains', env: 'POSTHORN_AUTH_OIDC_ALLOWED_DOMAINS', kind: 'domains', default: [] },
  { key: 'auth.system_from', env: 'POSTHORN_AUTH_SYSTEM_FROM', kind: 'nullable', default: null },
];

/**
 * A DNS server as `dns.Resolver#setServers` takes it: `ip`, `ipv4:port`, `[ipv6]` or `[ipv6]:port`
 * (a bare IPv6 address cannot carry a port). Null when malformed.
 */
export function parseServer(text: string): { ip: string; port: number | null } | null {
  let ip: string;
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    [, ip, port] = bracketed as unknown as [string, string, string | undefined];
    if (isIP(ip) !== 6) return null;
  } else if (isIP(text)) {
    ip = text;
  } else {
    const v4 = /^([^:]+):(\d+)$/.exec(text);
    if (!v4 || isIP(v4[1]) !== 4) return null;
    [, ip, port] = v4 as unknown as [string, string, string];
  }
  if (port === undefined) return { ip, port: null };
  const n = Number(port);
  return n >= 1 && n <= 65535 ? { ip, port: n } : null;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "5s" / "10m" / "2h" / "1d" / "250ms" → milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!m) return null;
  return Math.round(Number(m[1]) * UNITS[m[2]]);
}

function coerce(def: KeyDef, raw: unknown, fromEnv: boolean): unknown {
  const bad = (why: string): never => {
    throw new ConfigError(def.key, `${why} (got ${JSON.stringify(raw)}${fromEnv ? ` from ${def.env}` : ''})`);
  };
  const list = (v: unknown): unknown[] =>
    Array.isArray(v)
      ? v
      : typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : bad('must be a list');
  const port = (v: unknown): number => {
    const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
    const min = def.min ?? 0;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > 65535) bad(`must be a port number ${min}-65535`);
    return n as number;
  };
  // Tables come from the file as tables, from the environment as JSON.
  const table = (v: unknown): unknown => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v);
    } catch {
      return bad('must be a table (JSON in the environment variable)');
    }
  };
  switch (def.kind) {
    case 'site':
      return parseSiteTable(def.key, table(raw), false);
    case 'table': {
      // Its contents are checked by the part that reads it (delivery.bounce_classes: mail/bounce-class.ts).
      const t = table(raw);
      if (!t || typeof t !== 'object' || Array.isArray(t)) bad('must be a table');
      return t;
    }
    case 'sites': {
      const t = table(raw);
      if (!t || typeof t !== 'object' || Array.isArray(t)) bad('must be a table of sites');
      const out: Record<string, SiteRuleConfig> = {};
      for (const [name, site] of Object.entries(t as Record<string, unknown>)) {
        if (!/^[a-z0-9][a-z0-9_.-]{0,62}$/.test(name))
          throw new ConfigError(`${def.key}.${name}`, 'site names are 1-63 lowercase letters, digits, `_`, `.` or `-`');
        out[name] = parseSiteTable(`${def.key}.${name}`, site, true);
      }
      return out;
    }
    case 'ips':
      return parseSendingIps(def.key, table(raw));
    case 'names':
      return list(raw).map((s) => {
        const n = String(s).trim().toLowerCase();
        if (!NAME.test(n)) bad('must list names of 1-63 lowercase letters, digits, `_`, `.` or `-`');
        return n;
      });
    case 'string':
      if (typeof raw !== 'string' || raw.trim() === '') bad('must be a non-empty string');
      return raw;
    case 'nullable':
      if (raw === null || raw === '') return null;
      if (typeof raw !== 'string') bad('must be a string');
      return raw;
    case 'enum':
      if (typeof raw !== 'string' || !def.values!.includes(raw)) bad(`must be one of ${def.values!.join(', ')}`);
      return raw;
    case 'url': {
      if (typeof raw !== 'string') bad('must be a URL');
      let u: URL;
      try {
        u = new URL(raw as string);
      } catch {
        return bad('must be an absolute http(s) URL');
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') bad('must be an http(s) URL');
      return (raw as string).replace(/\/+$/, '');
    }
    case 'port':
      return port(raw);
    case 'ports':
      return list(raw).map(port);
    case 'int': {
      const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isInteger(n)) bad('must be an integer');
      if ((def.min !== undefined && (n as number) < def.min) || (def.max !== undefined && (n as number) > def.max))
        bad(`must be between ${def.min} and ${def.max}`);
      return n;
    }
    case 'number': {
      const n = typeof raw === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isFinite(n)) bad('must be a number');
      if ((def.min !== undefined && (n as number) < def.min) || (def.max !== undefined && (n as number) > def.max))
        bad(`must be between ${def.min} and ${def.max}`);
      return n;
    }
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'string' && /^(true|1|yes|on)$/i.test(raw.trim())) return true;
      if (typeof raw === 'string' && /^(false|0|no|off)$/i.test(raw.trim())) return false;
      return bad('must be true or false');
    case 'ranges':
      return list(raw).map((s) => {
        const text = String(s).trim();
        const [addr = '', bits, extra] = text.split('/');
        const family = isIP(addr);
        const max = family === 4 ? 32 : 128;
        if (!family || extra !== undefined || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max)))
          bad('must list IP addresses or CIDR ranges such as 127.0.0.1 or 10.0.0.0/8');
        return text;
      });
    case 'domains':
      return list(raw).map((s) => {
        const d = String(s).trim().toLowerCase().replace(/^@/, '');
        if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(d)) bad('must list email domains such as example.com');
        return d;
      });
    case 'servers':
      return list(raw).map((s) => {
        const text = String(s).trim();
        if (parseServer(text) === null) bad('must list DNS servers as ip, ip:port or [ipv6]:port');
        return text;
      });
    case 'duration': {
      const ms = typeof raw === 'string' ? parseDuration(raw) : null;
      if (ms === null || ms < (def.min ?? 1)) bad('must be a duration such as 30m, 72h or 3d');
      if (def.max !== undefined && ms! > def.max) bad(`must be at most ${def.max / 1000}s`);
      return ms;
    }
    case 'durations': {
      const items = list(raw);
      if (items.length === 0) bad('must list at least one wait');
      return items.map((s) => {
        const ms = parseDuration(String(s));
        if (ms === null || ms <= 0) bad('must be a comma list of durations such as 5s,10m,2h');
        return ms;
      });
    }
  }
}

/** Pool, region and site names. */
const NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

/** `delivery.ips`: an array of tables (TOML `[[delivery.ips]]`, JSON in POSTHORN_DELIVERY_IPS). */
export function parseSendingIps(key: string, raw: unknown): SendingIpConfig[] {
  if (!Array.isArray(raw)) throw new ConfigError(key, 'must be an array of tables ([[delivery.ips]], a JSON array in the environment variable)');
  const seen = new Set<string>();
  return raw.map((t, i) => {
    const at = `${key}[${i}]`;
    if (!t || typeof t !== 'object' || Array.isArray(t)) throw new ConfigError(at, 'must be a table');
    const { address, ehlo, pool = 'default', weight = 1, warmup = null, ...rest } = t as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra) throw new ConfigError(`${at}.${extra}`, 'is not a known setting of a sending IP (address, ehlo, pool, weight, warmup)');
    if (typeof address !== 'string' || !isIP(address))
      throw new ConfigError(`${at}.address`, `must be an IPv4 or IPv6 address (got ${JSON.stringify(address)})`);
    const canonical = address.toLowerCase();
    if (seen.has(canonical)) throw new ConfigError(`${at}.address`, `lists ${address} a second time`);
    seen.add(canonical);
    if (typeof ehlo !== 'string' || !HOST_PATTERN.test(ehlo.toLowerCase()) || ehlo.startsWith('*'))
      throw new ConfigError(`${at}.ehlo`, `must be the host name said in EHLO from ${address}, such as mta1.example.com`);
    if (typeof pool !== 'string' || !NAME.test(pool)) throw new ConfigError(`${at}.pool`, 'must be a name of 1-63 lowercase letters, digits, `_`, `.` or `-`');
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 1000)
      throw new ConfigError(`${at}.weight`, `must be an integer between 1 and 1000 (got ${JSON.stringify(weight)})`);
    if (warmup !== null && warmup !== false && warmup !== 'new' && warmup !== 'established')
      throw new ConfigError(`${at}.warmup`, 'must be "new", "established" or false');
    return { address: canonical, ehlo: ehlo.toLowerCase(), pool, weight, warmup: warmup || null };
  });
}

function lookup(obj: Record<string, unknown>, dotted: string): unknown {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function assign(obj: Record<string, unknown>, dotted: string, value: unknown) {
  const parts = dotted.split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    cur[p] ??= {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** Reject keys nobody reads: a typo in the file must not be silently ignored. */
function checkUnknown(file: Record<string, unknown>, prefix = '') {
  const known = new Set(KEYS.map((k) => k.key));
  // Every dotted prefix of a key is a section (`auth`, `auth.oidc`).
  const sections = new Set(
    KEYS.flatMap((k) =>
      k.key
        .split('.')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('.')),
    ),
  );
  for (const [k, v] of Object.entries(file)) {
    const full = prefix ? `${prefix}.${k}` : k;
    if (sections.has(full) && v && typeof v === 'object' && !Array.isArray(v)) checkUnknown(v as Record<string, unknown>, full);
    else if (!known.has(full)) throw new ConfigError(full, 'is not a known configuration key (see config.example.toml)');
  }
}

export interface LoadOptions {
  path?: string | null;
  env?: Record<string, string | undefined>;
  overrides?: Partial<Record<string, unknown>>; // dotted keys, used by tests
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const path = opts.path ?? env.POSTHORN_CONFIG ?? null;
  let file: Record<string, unknown> = {};
  if (path) {
    if (!existsSync(path)) throw new ConfigError('--config', `file not found: ${path}`);
    try {
      file = Bun.TOML.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      throw new ConfigError('--config', `cannot parse ${path}: ${(e as Error).message}`);
    }
    checkUnknown(file);
  }
  const out: Record<string, unknown> = {};
  for (const def of KEYS) {
    let raw: unknown = def.default;
    let fromEnv = false;
    const fileValue = lookup(file, def.key);
    if (fileValue !== undefined) raw = fileValue;
    if (env[def.env] !== undefined) {
      raw = env[def.env];
      fromEnv = true;
    }
    if (opts.overrides && def.key in opts.overrides) raw = opts.overrides[def.key];
    assign(out, def.key, coerce(def, raw, fromEnv));
  }
  // Built from KEYS, which name every field of Config.
  const cfg = out as unknown as Config;
  if (cfg.database.url !== null && !/^postgres(ql)?:\/\/./.test(cfg.database.url))
    throw new ConfigError('database.url', 'must be a postgres:// (or postgresql://) URL, or unset for the embedded store');
  if (cfg.delivery.mode === 'relay' && !cfg.delivery.relay_url) throw new ConfigError('delivery.relay_url', 'is required when `delivery.mode` is relay');
  if (cfg.delivery.relay_url) {
    try {
      const u = new URL(cfg.delivery.relay_url);
      if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new Error();
    } catch {
      throw new ConfigError('delivery.relay_url', 'must be an smtp:// or smtps:// URL');
    }
  }
  for (const side of ['http', 'smtp'] as const) {
    if (!!cfg[side].tls_cert !== !!cfg[side].tls_key) throw new ConfigError(`${side}.tls_cert`, `and \`${side}.tls_key\` must be set together`);
    for (const part of ['tls_cert', 'tls_key'] as const) {
      const file = cfg[side][part];
      if (file && !existsSync(file)) throw new ConfigError(`${side}.${part}`, `names a file that does not exist: ${file}`);
    }
  }
  if (cfg.spam.rspamd_url) {
    let u: URL | null = null;
    try {
      u = new URL(cfg.spam.rspamd_url);
    } catch {}
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
      throw new ConfigError('spam.rspamd_url', "must be an http:// or https:// URL of rspamd's normal worker, such as http://127.0.0.1:11333");
    cfg.spam.rspamd_url = cfg.spam.rspamd_url.replace(/\/+$/, '');
  }
  if (cfg.agent.url) {
    let u: URL | null = null;
    try {
      u = new URL(cfg.agent.url);
    } catch {}
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
      throw new ConfigError('agent.url', 'must be the http:// or https:// base URL of an OpenAI-compatible API, such as http://127.0.0.1:11434/v1');
    if (!cfg.agent.model) throw new ConfigError('agent.model', 'is required when `agent.url` is set (the model the endpoint runs, such as llama3.1:8b)');
    cfg.agent.url = cfg.agent.url.replace(/\/+$/, '');
  }
  // The last field of a Feedback-ID, whose fields are separated by colons.
  if (cfg.delivery.feedback_id !== null && !/^[A-Za-z0-9._-]{1,64}$/.test(cfg.delivery.feedback_id))
    throw new ConfigError(
      'delivery.feedback_id',
      'must be 1-64 letters, digits, dots, dashes or underscores (no colon: it is the last field of a Feedback-ID)',
    );
  const acme = cfg.tls.acme;
  if (acme.enabled && !acme.terms_agreed)
    throw new ConfigError(
      'tls.acme.terms_agreed',
      `must be true when \`tls.acme.enabled\` is: read the terms of service of the CA at ${acme.directory} (its directory's meta.termsOfService), then set tls.acme.terms_agreed = true (POSTHORN_TLS_ACME_TERMS_AGREED=true)`,
    );
  if (acme.email !== null && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(acme.email))
    throw new ConfigError('tls.acme.email', `must be an email address (got ${JSON.stringify(acme.email)})`);
  if (acme.ca_file && !existsSync(acme.ca_file)) throw new ConfigError('tls.acme.ca_file', `names a file that does not exist: ${acme.ca_file}`);
  if (acme.enabled && !acme.directory.startsWith('https://')) throw new ConfigError('tls.acme.directory', 'must be an https:// URL (RFC 8555 §6.1)');
  if (acme.enabled && cfg.http.tls_cert)
    throw new ConfigError(
      'http.tls_cert',
      'must be unset when `tls.acme.enabled` is: the CA asks its HTTP-01 challenges over plain HTTP on that listener; HTTPS is served on `tls.acme.https_ports`',
    );
  if (acme.enabled && cfg.http.port !== 0 && acme.https_ports.includes(cfg.http.port))
    throw new ConfigError(
      'tls.acme.https_ports',
      `lists http.port (${cfg.http.port}): the HTTP listener stays plain HTTP, where the CA's HTTP-01 challenges arrive`,
    );
  if (cfg.cluster.region !== null && !NAME.test(cfg.cluster.region))
    throw new ConfigError('cluster.region', 'must be a name of 1-63 lowercase letters, digits, `_`, `.` or `-`, such as eu-west-1');
  const ca = cfg.delivery.mta_sts.ca_file;
  if (ca && !existsSync(ca)) throw new ConfigError('delivery.mta_sts.ca_file', `names a file that does not exist: ${ca}`);
  const oidc = cfg.auth.oidc;
  if (oidc.issuer) {
    let u: URL | null = null;
    try {
      u = new URL(oidc.issuer);
    } catch {}
    if (!u || (u.protocol !== 'https:' && !(u.protocol === 'http:' && /^(127\.|localhost$|\[::1\]$)/.test(u.hostname))))
      throw new ConfigError('auth.oidc.issuer', 'must be an https:// URL (http:// only on loopback, for tests)');
    if (!oidc.client_id) throw new ConfigError('auth.oidc.client_id', 'is required when `auth.oidc.issuer` is set');
  }
  // Posthorn's own mail to dashboard users comes from this address (a plain one, or `Name <address>`).
  if (!cfg.auth.system_from) cfg.auth.system_from = `Posthorn <posthorn@${cfg.smtp.hostname}>`;
  else if (!/^[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+$|^[^<>]*<[^<>@\s]+@[^<>@\s]+>$/.test(cfg.auth.system_from.trim()))
    throw new ConfigError('auth.system_from', 'must be an email address such as posthorn@mail.example.com, or `Name <address>`');
  if (cfg.auth.session_idle_timeout > cfg.auth.session_lifetime)
    throw new ConfigError('auth.session_idle_timeout', 'must not be longer than `auth.session_lifetime`');
  // Each SMTP port is one listener: the same port twice (or in both lists) could never bind.
  const seen = new Set<number>();
  for (const list of ['starttls_ports', 'tls_ports'] as const) {
    for (const p of cfg.smtp[list]) {
      if (p !== 0 && seen.has(p))
        throw new ConfigError(`smtp.${list}`, `lists port ${p} more than once (across \`smtp.starttls_ports\` and \`smtp.tls_ports\`)`);
      seen.add(p);
    }
  }
  return cfg;
}
