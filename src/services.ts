// The composition root: the one place that builds Posthorn's running parts, in dependency order, and
// wires them together — the event sinks, which worker the store wakes when work becomes due, and
// the order of shutdown. Every part receives only what it names in its own deps type.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config';
import { openStore, storeOptions, SIGNALS, type Signal, type Store } from './store';
import { Resolver } from './dns/resolver';
import { DomainVerifier } from './domains/verify';
import { Doctor } from './health';
import { applyVerdicts } from './delivery/listings';
import { DmarcSummaries } from './health/dmarc';
import { TlsRptReports } from './delivery/tls-rpt-reports';
import { DomainClaims } from './domains/claims';
import { recordHosts } from './domains/records';
import type { Events } from './events';
import { RateLimiter } from './limits/ratelimit';
import { createEvents } from './events/webhooks';
import { BackOfficeThread } from './backoffice/host';
import { LiveFeed } from './events/live';
import { BroadcastSender } from './broadcasts/runner';
import { ImportRunner } from './imports';
import { Telemetry } from './telemetry';
import { Auth } from './accounts/auth';
import { KeyUsage } from './accounts/keys';
import { GroupCommit } from './sending/submit';
import { SystemSender } from './sending/system';
import { Idempotency } from './sending/idempotency';
import { DashboardAssets } from './dashboard/assets';
import { Insights, Rspamd } from './insights';
import { ThreadMessageHooks, type InboxListeners } from './inboxes/hooks';
import { InboxSearch } from './inboxes/search';
import { DatabaseThreadSearch, IndexedThreadSearch, storeMessages } from './inboxes/search-store';
import { BounceClassifier } from './mail/bounce-class';
import { AcmeManager, storedCertificate } from './acme/manager';

export interface Services {
  config: Config;
  /** The clock of the parts that take one (the scheduler's ticks, the request limit, `scheduled_at`): tests set it. */
  now: () => number;
  store: Store;
  /** DNS asked afresh each time: domain verification must see the zone as it is now. */
  dns: Resolver;
  domains: DomainVerifier;
  /** The deliverability checks (docs/deliverability.md §1), run on a timer by the scheduler. */
  doctor: Doctor;
  /** What a domain's DMARC aggregate reports say (docs/deliverability.md §4): GET /domains/{id}/dmarc. */
  dmarc: DmarcSummaries;
  /** TLS-RPT reports mailed and posted once a day (docs/deliverability.md §5), by the scheduler. */
  tlsRpt: TlsRptReports;
  /** Domain claims and the background look-ups of their TXT records. */
  claims: DomainClaims;
  events: Events;
  /** The per-team request limit, one instance shared by the HTTP API and SMTP submission. */
  limiter: RateLimiter;
  /** The sending core's group commit on this thread's store (every way in, broadcasts). */
  commits: GroupCommit;
  /** Idempotency keys of sends: the requests under way, shared by the HTTP API and SMTP submission. */
  idempotency: Idempotency;
  /** API keys' `last_used_at`, recorded at most once a minute per key (HTTP and SMTP AUTH). */
  keyUsage: KeyUsage;
  /**
   * Delivery, webhook delivery, the processing of spooled inbound mail and automation runs, on a thread of their own
   * (backoffice/); `start()` is called by `serve` (and the test harness).
   */
  backOffice: BackOfficeThread;
  /** The dashboard sessions' live streams (GET /auth/session/events, events/live.ts). */
  live: LiveFeed;
  /** Background broadcast sends; the scheduler releases due ones. */
  broadcasts: BroadcastSender;
  /** Background contact imports; the scheduler resumes unfinished ones. */
  imports: ImportRunner;
  /** Operator metrics (GET /metrics). */
  telemetry: Telemetry;
  /** Deliverability insights of sent emails and broadcast reviews, rspamd's scores among them (when configured). */
  insights: Insights;
  /** Dashboard sign-in: sessions, passwords, TOTP, OpenID Connect, team members. */
  auth: Auth;
  /** Inboxes' listeners on this thread: the hook "a message joined a thread" and the search index (docs/api.md §25). */
  inboxes: InboxListeners;
  /** The dashboard's static files (bundled on first use from a checkout, embedded in the binary). */
  dashboard: DashboardAssets;
  /** The bounce classes' rules (shipped, overridden by `delivery.bounce_classes`): POST /suppressions/lift classifies with them. */
  bounces: BounceClassifier;
  /** Certificates by ACME (`tls.acme.enabled`, docs/mail.md §4, "Certificates by ACME"); null when off. `serve` loads it and hands its certificate to the listeners. */
  acme: AcmeManager | null;
}

export async function createServices(config: Config, { now = Date.now }: { now?: () => number } = {}): Promise<Services> {
  // First: rules that name an unknown class refuse to start before anything opens (BounceRuleError).
  const bounces = new BounceClassifier(config.delivery.bounce_classes);
  // data_dir holds the generated SMTP certificate in every mode; LMDB makes it for its own files,
  // but a cluster node (PostgreSQL) keeps nothing else there and would find none on a fresh start.
  mkdirSync(config.data_dir, { recursive: true, mode: 0o700 });
  const store = await openStore(storeOptions(config));
  const dns = new Resolver(config.dns.servers);
  // Webhook-visible events fan out to the outbox inside the event's own unit of work.
  const events = createEvents();
  const backOffice = new BackOfficeThread(config);
  const telemetry = new Telemetry(store);
  events.observe((ev) => telemetry.event(ev));
  telemetry.addCounts(() => backOffice.counts());
  // Work committed here to the queue, the outbox, the inbound spool or the automations wakes the
  // back office, which does it (store/collections.ts: which write fires which signal).
  for (const signal of Object.keys(SIGNALS) as Signal[]) store.on(signal, () => backOffice.kick(signal));
  // The dashboard's live streams hear every commit's changes: this thread's, the back office's and,
  // in cluster mode, every node's (the store carries them: store/pg/signals.ts).
  const live = new LiveFeed();
  store.onChange((changes) => live.publish(changes));
  backOffice.onChange((changes) => live.publish(changes));
  const commits = new GroupCommit(store);
  const spam = config.spam.rspamd_url ? new Rspamd(config.spam.rspamd_url, config.spam.timeout, (why) => telemetry.spamFailure(why)) : null;
  return {
    config,
    now,
    store,
    dns,
    events,
    domains: new DomainVerifier(store, dns, config, events),
    claims: new DomainClaims(store, dns, { events, hosts: recordHosts(config) }),
    limiter: new RateLimiter(config.limits.requests_per_second, now),
    commits,
    idempotency: new Idempotency(store),
    keyUsage: new KeyUsage(store, now),
    backOffice,
    live,
    broadcasts: new BroadcastSender({ store, events, config, commits }),
    imports: new ImportRunner({ store }),
    telemetry,
    insights: new Insights({ store, config, dns: dns.withCache(), spam }),
    // Inbox search (docs/api.md §25.9): the database's full-text search in cluster mode; else the
    // teams' indexes on this thread, kept in data_dir between uses.
    inboxes: {
      hooks: new ThreadMessageHooks(),
      search: store.inboxText
        ? new DatabaseThreadSearch(store.inboxText)
        : new IndexedThreadSearch(new InboxSearch({ source: storeMessages(store), dir: join(config.data_dir, 'inbox-search') })),
    },
    auth: new Auth(store, config, new SystemSender({ store, events, config, commits, now }, config.auth.system_from)),
    dashboard: new DashboardAssets(),
    doctor: new Doctor({
      config,
      dns,
      domains: () => store.domains.everything(),
      acme: () => storedCertificate(store, config),
      onVerdicts: (verdicts, teamsOf, at) => applyVerdicts(store, events, verdicts, teamsOf, at),
    }),
    dmarc: new DmarcSummaries({ store, config, dns: dns.withCache() }),
    tlsRpt: new TlsRptReports({ store, events, config, commits, dns, now }),
    bounces,
    acme: config.tls.acme.enabled ? new AcmeManager({ store, config, now }) : null,
  };
}

export async function closeServices(svc: Services): Promise<void> {
  svc.domains.stop();
  svc.claims.stop();
  svc.live.close();
  // First: a broadcast batch in hand still commits emails and wakes the delivery engine.
  await Promise.all([svc.broadcasts.stop(), svc.imports.stop()]);
  await Promise.all([svc.backOffice.stop(), svc.claims.idle()]);
  // The search indexes changed since they were written (their store is read, so before it closes).
  if (svc.inboxes.search instanceof IndexedThreadSearch) await svc.inboxes.search.engine.close().catch(() => {});
  await svc.store.close();
  svc.dns.close();
}
