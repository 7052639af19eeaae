// Operator metrics in Prometheus' text format (GET /metrics, README "Monitoring"): the state of
// the delivery queue, the webhook outbox and the inbound spool read from the store at scrape time,
// open SMTP sessions, and counters of what happened since start — emails accepted, email events by type
// (delivery results among them), HTTP requests with their latency. Counters move only after the
// unit of work that made the event has committed.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventRec, StoreReader } from '../store';

export class Telemetry {
  readonly registry = new Registry();
  private readonly events: Counter;
  private readonly accepted: Counter;
  private readonly deliveries: Counter;
  private readonly http: Histogram;
  /** Open SMTP sessions across the listeners; set by `serve` once SMTP runs (0 until then). */
  smtpSessions: () => number = () => 0;
  /** The queue's state, read once per scrape (a walk over the queue's keys) for the gauges that show it. */
  private queue = { ready: 0, waiting: 0, oldest: null as number | null };

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
      name: 'posthorn_smtp_sessions',
      help: 'Open SMTP sessions across the listeners.',
      registers,
      collect() {
        this.set(self.smtpSessions());
      },
    });
  }

  /** A committed event (Events calls this after the commit). */
  event(ev: EventRec): void {
    if (!ev.type.startsWith('email.')) return;
    const type = ev.type.slice('email.'.length);
    this.events.inc({ type });
    if (type === 'queued' || type === 'scheduled') this.accepted.inc();
    else if (type === 'delivered') this.deliveries.inc({ result: 'delivered' });
    else if (type === 'bounced') this.deliveries.inc({ result: 'bounced' });
    else if (type === 'delivery_delayed') this.deliveries.inc({ result: 'deferred' });
  }

  request(method: string, status: number, seconds: number): void {
    this.http.observe({ method, status: String(status) }, seconds);
  }

  async text(): Promise<string> {
    this.queue = await this.store.queue.stats(Date.now());
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
