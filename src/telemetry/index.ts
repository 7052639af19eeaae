// Operator metrics in Prometheus' text format (GET /metrics, README "Monitoring"): the state of
// the delivery queue, the webhook outbox and the inbound spool read from the store at scrape time,
// open SMTP sessions, and counters of what happened since start — emails accepted, email events by type
// (delivery results among them), delivery replies by bounce class and site, deliverability
// incidents opened, blocklist listings of the sending addresses and domains, HTTP requests with their latency. Counters move only after the
// unit of work that made the event has committed; events are counted in plain maps and handed to
// the prom-client counters at scrape time, so recording one costs a map update.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type EventRec, LISTINGS_TEAM, type StoreReader } from '../store';
import { kindInfo } from '../event-catalogue';

/** The key of a spam check failure among the counts: the prefix, then its reason. */
const SPAM_FAILURE = 'spam_check_failed:';
/** The key of a DMARC report's fate among the counts: the prefix, then stored, duplicate or why it was refused. */
const DMARC_REPORT = 'dmarc_report:';

/**
 * Email events counted by type since start (`email.delivered` → n), delivery replies by bounce class
 * and site (`reply <class> <site>`) and incidents opened (`incident <class> <site>`), in one thread:
 * a map update each. The HTTP thread's Telemetry shows its own counts and those of the delivery thread.
 */
export class EventCounts {
  private readonly counts = new Map<string, number>();

  /** A committed event (Events calls this after the commit). */
  event(ev: EventRec): void {
    if (ev.type.startsWith('email.')) this.add(ev.type);
    else if (ev.type === 'deliverability.incident') this.add(`incident ${ev.data.class} ${ev.data.site}`);
  }

  /** A committed reply that was not a delivery, of a bounce class, from a site (`other`: a site of its own). */
  reply(cls: string, site: string): void {
    this.add(`reply ${cls} ${site}`);
  }

  private add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** A spam check that got no score from rspamd, and why (insights/rspamd.ts). */
  spamFailure(why: string): void {
    this.add(`${SPAM_FAILURE}${why}`);
  }

  /** A DMARC aggregate report received: stored, a duplicate, or refused and why (inbound/dmarc-reports.ts). */
  dmarcReport(result: string): void {
    this.add(`${DMARC_REPORT}${result}`);
  }

  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }
}

export class Telemetry {
  readonly registry = new Registry();
  private readonly events: Counter;
  private readonly accepted: Counter;
  private readonly deliveries: Counter;
  private readonly spamFailures: Counter;
  private readonly replies: Counter;
  private readonly incidents: Counter;
  private readonly dmarcReports: Counter;
  private readonly http: Histogram;
  /** Open SMTP sessions across the listeners; set by `serve` once SMTP runs (0 until then). */
  smtpSessions: () => number = () => 0;
  /** The queue's state, read once per scrape (a walk over the queue's keys) for the gauges that show it. */
  private queue = { ready: 0, waiting: 0, oldest: null as number | null };
  /** Email events since start by type (`email.delivered` → n), and what the counters show of them. */
  private readonly counts = new EventCounts();
  private readonly reported = new Map<string, number>();
  private readonly sources: (() => Promise<Map<string, number>>)[] = [];
  private readonly httpChildren = new Map<string, ReturnType<Histogram['labels']>>();

  constructor(private readonly store: StoreReader) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'posthorn_process_' });
    this.accepted = new Counter({ name: 'posthorn_emails_accepted_total', help: 'Emails accepted (queued or scheduled), every way in.', registers });
    this.events = new Counter({ name: 'posthorn_email_events_total', help: 'Email events recorded, by type.', labelNames: ['type'], registers });
    this.deliveries = new Counter({
      name: 'posthorn_deliveries_total',
      help: 'Delivery outcomes per recipient: delivered, bounced, or deferred (first temporary failure).',
      labelNames: ['result'],
      registers,
    });
    this.spamFailures = new Counter({
      name: 'posthorn_spam_check_failures_total',
      help: 'Spam checks that got no score from rspamd (spam.rspamd_url), by reason: timeout, unreachable or error. Nothing waited for them.',
      labelNames: ['reason'],
      registers,
    });
    this.replies = new Counter({
      name: 'posthorn_delivery_replies_total',
      help: 'Replies to delivery attempts that were not a delivery, per recipient, by bounce class and site (sites of their own count as `other`).',
      labelNames: ['class', 'site'],
      registers,
    });
    this.incidents = new Counter({
      name: 'posthorn_deliverability_incidents_total',
      help: 'Deliverability incidents opened (replies of a site that speak of the sender: class reputation or authentication), by class and site.',
      labelNames: ['class', 'site'],
      registers,
    });
    this.dmarcReports = new Counter({
      name: 'posthorn_dmarc_reports_total',
      help: 'DMARC aggregate reports received at rua addresses, by result: stored, duplicate, or refused (too_large, malformed, unsupported, unknown_domain, no_report) and stored nowhere.',
      labelNames: ['result'],
      registers,
    });
    this.http = new Histogram({
      name: 'posthorn_http_request_duration_seconds',
      help: 'HTTP request latency, by method and status code.',
      labelNames: ['method', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    const self = this;
    new Gauge({
      name: 'posthorn_queue_entries',
      help: 'Delivery queue entries (an email’s recipients at one domain), by state: ready (due now) or waiting (retry or later).',
      labelNames: ['state'],
      registers,
      collect() {
        this.set({ state: 'ready' }, self.queue.ready);
        this.set({ state: 'waiting' }, self.queue.waiting);
      },
    });
    new Gauge({
      name: 'posthorn_queue_oldest_age_seconds',
      help: 'Age of the oldest email still in the delivery queue (0 when empty).',
      registers,
      collect() {
        const { oldest } = self.queue;
        this.set(oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
      },
    });
    new Gauge({
      name: 'posthorn_scheduled_emails',
      help: 'Emails scheduled for later.',
      registers,
      async collect() {
        this.set(await self.store.schedule.size());
      },
    });
    new Gauge({
      name: 'posthorn_webhook_backlog',
      help: 'Webhook messages with an attempt still to make.',
      registers,
      async collect() {
        this.set(await self.store.outbox.size());
      },
    });
    new Gauge({
      name: 'posthorn_inbound_spool',
      help: 'Inbound messages answered 250 and not stored yet, by state: waiting (to be processed) or failed (given up, kept with their error).',
      labelNames: ['state'],
      registers,
      async collect() {
        const { waiting, failed } = await self.store.inboundSpool.counts();
        this.set({ state: 'waiting' }, waiting);
        this.set({ state: 'failed' }, failed);
      },
    });
    new Gauge({
      name: 'posthorn_incoming_requests',
      help: 'Batches accepted (answered 2xx) and not written as their emails yet: the incoming queue (docs/ARCHITECTURE.md §4).',
      registers,
      async collect() {
        this.set(await self.store.incoming.count());
      },
    });
    new Gauge({
      name: 'posthorn_blocklist_listed',
      help: 'Whether a DNS blocklist zone lists a sending address or domain (1) or not (0), as the last check found (docs/deliverability.md §3.1); an unknown answer is left out.',
      labelNames: ['zone', 'target'],
      registers,
      async collect() {
        this.reset();
        for (const l of await self.store.listings.all(LISTINGS_TEAM))
          if (l.status !== 'unknown') this.set({ zone: l.zone, target: l.target }, l.status === 'listed' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'posthorn_smtp_sessions',
      help: 'Open SMTP sessions across the listeners.',
      registers,
      collect() {
        this.set(self.smtpSessions());
      },
    });
  }

  /** A committed event (Events calls this after the commit): counted here, handed to prom-client at scrape time. */
  event(ev: EventRec): void {
    this.counts.event(ev);
  }

  /** A spam check without a score, on this thread (the back office's arrive with its counts). */
  spamFailure(why: string): void {
    this.counts.spamFailure(why);
  }

  /** Counts of events recorded elsewhere (the delivery thread), read at each scrape. */
  addCounts(source: () => Promise<Map<string, number>>): void {
    this.sources.push(source);
  }

  request(method: string, status: number, seconds: number): void {
    // One child per method and status: prom-client hashes the labels of every unlabelled call.
    const key = `${method} ${status}`;
    let child = this.httpChildren.get(key);
    if (!child) {
      child = this.http.labels(method, String(status));
      this.httpChildren.set(key, child);
    }
    child.observe(seconds);
  }

  /** Move the prom-client counters up to the event counts (here and from every source). */
  private async countEvents(): Promise<void> {
    const totals = this.counts.snapshot();
    for (const source of this.sources) for (const [k, v] of await source()) totals.set(k, (totals.get(k) ?? 0) + v);
    const add = (counter: Counter, key: string, labels: Record<string, string> | null, total: number) => {
      const delta = total - (this.reported.get(key) ?? 0);
      if (delta <= 0) return;
      if (labels) counter.inc(labels, delta);
      else counter.inc(delta);
      this.reported.set(key, total);
    };
    let accepted = 0;
    for (const [type, n] of totals) {
      if (type.startsWith(DMARC_REPORT)) {
        add(this.dmarcReports, type, { result: type.slice(DMARC_REPORT.length) }, n);
        continue;
      }
      if (type.startsWith(SPAM_FAILURE)) {
        add(this.spamFailures, type, { reason: type.slice(SPAM_FAILURE.length) }, n);
        continue;
      }
      const [kind, cls = '', site = ''] = type.split(' ');
      if (kind === 'reply' || kind === 'incident') {
        add(kind === 'reply' ? this.replies : this.incidents, type, { class: cls, site }, n);
        continue;
      }
      add(this.events, type, { type: type.slice('email.'.length) }, n);
      // Accepted emails, and delivery outcomes per recipient: what the catalogue counts them as.
      const result = kindInfo(type)?.operator;
      if (result === 'accepted') accepted += n;
      else if (result) add(this.deliveries, `deliveries ${result}`, { result }, n);
    }
    add(this.accepted, 'accepted', null, accepted);
  }

  async text(): Promise<string> {
    this.queue = await this.store.queue.stats(Date.now());
    await this.countEvents();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
