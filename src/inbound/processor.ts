// The inbound processor (docs/mail.md §4–5): the spool's worker. The SMTP listener answers 250 once
// a message and its envelope are committed to the spool; this takes spooled messages (the shared
// due-work loop) and does what used to hold the 250 back: parse (mailparser), check SPF, DKIM and
// DMARC (mailauth), store one record per team with its `email.received` event, read reports at
// return-path addresses as bounces and complaints (feedback/), and DMARC aggregate reports at `rua`
// addresses (dmarc-reports.ts). The records, their event and the
// spool entry's removal commit together, so a message is stored exactly once.
//
// Persist before acting: a claim counts the attempt and moves the message to its retry time
// first, so a crash mid-attempt means another attempt (at once when the service starts again).
// A message that keeps failing is retried PROCESS_RETRIES times, then given up on: kept in the
// spool with its error (until retention), logged, never retried — never lost, never looping.
//
// Its dependencies are the store, events, feedback, DNS and two settings, and it talks to the
// listener only through the store, so it can run wherever the store is open. It is a DueService:
// start, stop, kick and idle are the shared worker's (work/due-service.ts).
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import type { Events } from '../events';
import type { Feedback, ReportAction } from '../feedback';
import type { SpooledMessage, Store, Tx } from '../store';
import type { Rspamd } from '../insights/rspamd';
import { readReport, type Report } from '../mail/reports';
import { DueService } from '../work/due-service';
import { retryWait } from '../work/retry';
import { ByteBudget } from '../limits/budget';
import { log } from '../log';
import { prepareReceived, type PreparedReceived } from './received';
import type { ThreadDeps } from '../inboxes/threads';
import { linkLifetime } from './received-payload';
import { SignedLinks } from '../links/signed';
import { parseMessage } from '../mail/parse';
import { commitDmarc, dmarcRecipients, DMARC_MEMORY, prepareDmarc, type DmarcResult, type PreparedDmarc } from './dmarc-reports';

export interface InboundDeps {
  store: Store;
  events: Events;
  /** A caching resolver (Resolver#withCache): SPF, DKIM and DMARC lookups. */
  dns: Resolver;
  feedback: Feedback;
  /** `public_url` and `webhooks`: the download links of `email.received` with content (received-payload.ts). */
  config: Pick<Config, 'smtp' | 'public_url' | 'webhooks'> & { deliverability: Pick<Config['deliverability'], 'dmarc_rua'> };
  /** rspamd, when `spam.rspamd_url` is set: each received email carries its verdict. */
  spam?: Rspamd | null;
  /** Inboxes' listeners: the agent's hook and the search index hear of each message that joins a thread. */
  inboxes?: Pick<ThreadDeps, 'hooks' | 'search'>;
  /** Counts what became of each DMARC report (GET /metrics `posthorn_dmarc_reports_total`), after the commit. */
  dmarcCounted?: (result: DmarcResult) => void;
}

/** Waits after a failed attempt; the message is given up on after the last. */
export const PROCESS_RETRIES = [10_000, 60_000, 600_000, 3_600_000];
export const MAX_ATTEMPTS = PROCESS_RETRIES.length + 1;
/** Bytes of messages being processed at once (each counted three times: bytes, trace copy, parse). */
export const PROCESS_BUDGET = 128 * 1024 * 1024;

interface Prepared {
  received: PreparedReceived | null;
  actions: ReportAction[];
  dmarc: PreparedDmarc | null;
}
type Outcome = { ok: true; prepared: Prepared } | { ok: false; error: string };
/** A message taken for an attempt, already persisted at `due` (its retry time). */
interface Claimed {
  msg: SpooledMessage;
  due: number;
}

export class InboundProcessor extends DueService<Claimed, Outcome> {
  private readonly budget = new ByteBudget(PROCESS_BUDGET);
  private readonly links: SignedLinks;

  constructor(
    private readonly svc: InboundDeps,
    opts: { concurrency?: number } = {},
  ) {
    super({ name: 'inbound', concurrency: opts.concurrency ?? 16, graceMs: 10_000 });
    this.links = new SignedLinks(svc.store.secret('links'), svc.config.public_url);
  }

  override async start(): Promise<void> {
    // In cluster mode a message in flight may be another node's: it waits for its lease instead.
    if (this.svc.store.exclusive) await this.resumeInterrupted();
    super.start();
    const { waiting, failed } = await this.svc.store.inboundSpool.counts();
    log.info('inbound.started', { waiting, failed });
  }

  protected nextDue(): Promise<number | null> {
    return this.svc.store.inboundSpool.nextDue();
  }

  protected key(c: Claimed): string {
    return c.msg.id;
  }

  /** Messages a process that is gone left mid-attempt are due at once, not at their retry time. */
  private async resumeInterrupted(): Promise<void> {
    const resumed = await this.svc.store.write(async (tx) => {
      const now = Date.now();
      let n = 0;
      for (const { id } of await tx.inboundSpool.due(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) {
        const msg = await tx.inboundSpool.get(id);
        if (!msg?.attempting) continue;
        tx.inboundSpool.update({ ...msg, attempting: false }, now);
        n++;
      }
      return n;
    });
    if (resumed) log.warn('inbound.resumed_interrupted', { messages: resumed });
  }

  protected claim(max: number, busy: ReadonlySet<string>): Promise<Claimed[]> {
    return this.svc.store.write(
      async (tx) => {
        const now = Date.now();
        const out: Claimed[] = [];
        for (const { id } of await tx.inboundSpool.due(now, max + busy.size)) {
          if (out.length >= max) break;
          if (busy.has(id)) continue;
          const msg = await tx.inboundSpool.get(id);
          if (!msg) continue;
          if (msg.attempts >= MAX_ATTEMPTS) {
            // Its last attempt never finished (the process died during it, each time).
            giveUp(tx, msg, msg.error ?? 'processing was interrupted on every attempt');
            continue;
          }
          const attempts = msg.attempts + 1;
          const next = { ...msg, attempts, attempting: true };
          const due = now + retryWait(PROCESS_RETRIES, attempts);
          tx.inboundSpool.update(next, due);
          out.push({ msg: next, due });
        }
        return out;
        // This node's leases: another takes them over at once if it dies (store/interface.ts).
      },
      { lease: true },
    );
  }

  /** Parse and check (no writes); a failure is the outcome, not a throw. */
  protected async attempt({ msg: m }: Claimed): Promise<Outcome> {
    // A DMARC report message also holds its expanded reports (dmarc-reports.ts DMARC_MEMORY).
    const dmarc = dmarcRecipients(m, this.svc.config.deliverability.dmarc_rua).length ? DMARC_MEMORY : 0;
    const release = await this.budget.take(3 * m.size + dmarc);
    try {
      const raw = await this.svc.store.inboundSpool.raw(m.id);
      if (!raw) return { ok: false, error: 'the message bytes are missing from the spool' };
      return { ok: true, prepared: await this.prepare(m, raw) };
    } catch (e) {
      return { ok: false, error: String((e as Error)?.stack ?? e) };
    } finally {
      release();
    }
  }

  private async prepare(m: SpooledMessage, raw: Uint8Array): Promise<Prepared> {
    const { dns, events, feedback, config, spam, inboxes } = this.svc;
    const linkTtl = linkLifetime(config.webhooks.retry_schedule);
    const received = m.inbound.length ? await prepareReceived({ dns, events, links: this.links, linkTtl, spam, inboxes }, m, raw, config.smtp.hostname) : null;
    const actions: ReportAction[] = [];
    const dmarcTo = dmarcRecipients(m, config.deliverability.dmarc_rua);
    const dmarc = dmarcTo.length ? await prepareDmarc(this.svc.store, raw, dmarcTo, config.deliverability.dmarc_rua, m.received_at) : null;
    const bounceTo = m.reports.filter((a) => !dmarcTo.includes(a));
    if (bounceTo.length) {
      let report: Report;
      try {
        // keepDeliveryStatus: the message/delivery-status part as an attachment, not body text.
        report = readReport(
          await parseMessage(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true }),
        );
      } catch {
        report = { kind: 'none', reason: 'malformed-report' };
      }
      for (const address of bounceTo) {
        const action = await feedback.target(address, report);
        if (action) actions.push(action);
      }
    }
    return { received, actions, dmarc };
  }

  /** Store and apply, and the message leaves the spool — or wait for the retry, or give up. */
  protected async settle({ msg: m, due }: Claimed, out: Outcome): Promise<void> {
    const { store, feedback } = this.svc;
    if (out.ok) {
      const { received, actions, dmarc } = out.prepared;
      const saved = await store.write(async (tx) => {
        if (!(await tx.inboundSpool.get(m.id))) return []; // gone meanwhile (retention)
        const recs = (await received?.commit(tx)) ?? [];
        for (const a of actions) await feedback.apply(tx, a);
        if (dmarc) {
          const results = await commitDmarc(tx, dmarc);
          const count = this.svc.dmarcCounted;
          if (count) tx.afterCommit(() => results.forEach(count));
        }
        tx.inboundSpool.remove(m.id);
        return recs;
      });
      for (const r of saved) log.info('smtp.inbound.stored', { team_id: r.team_id, email_id: r.id, received_for: r.received_for, size: r.size });
      return;
    }
    await store.write(async (tx) => {
      const cur = await tx.inboundSpool.get(m.id);
      if (!cur) return;
      if (cur.attempts >= MAX_ATTEMPTS) return giveUp(tx, cur, out.error);
      // The retry time the claim persisted stands.
      tx.inboundSpool.update({ ...cur, attempting: false, error: out.error }, due);
      tx.afterCommit(() =>
        log.warn('inbound.attempt_failed', { spool_id: m.id, attempt: cur.attempts, retry_at: new Date(due).toISOString(), error: out.error }),
      );
    });
  }
}

/** Kept with its error, never due again; the operator learns of it from the log. */
function giveUp(tx: Tx, m: SpooledMessage, error: string): void {
  tx.inboundSpool.update({ ...m, attempting: false, error }, null);
  tx.afterCommit(() => log.error('inbound.failed', { spool_id: m.id, attempts: m.attempts, received_at: m.received_at, size: m.size, error }));
}
