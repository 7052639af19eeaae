// The delivery engine (docs/ARCHITECTURE.md §4, steps 9–11): the queue's worker. It takes due queue
// entries and persists each one at its next attempt time *before* trying it ("persist before
// acting", docs/ARCHITECTURE.md §1 — a crash mid-attempt means a retry), runs the attempts
// concurrently, and records every recipient's outcome through the one event function, all outcomes
// of one attempt in one commit. The class only sequences the steps — it reads, calls them, writes:
//   claim   — scan.ts (which due keys are looked at), claim.ts (what each is: passed over, held,
//             dropped, failed, or taken and leased), one unit of work;
//   attempt — attempt.ts, with route.ts (the site the MX hosts show, its room and lease); no writes;
//             sandbox.ts answers for Resend's test addresses instead, without DNS or a connection;
//   settle  — settle.ts (each reply's class and outcome, its event and suppression, the retry) and
//             incidents.ts (replies that speak of the sender), one unit of work.
// The loop itself (sleep until due or kicked, concurrency, graceful stop) is the shared
// DueWorker, behind the back office's worker face (work/due-service.ts).
import { listedTargets } from './listings';
import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import { signingKeys } from '../domains/dkim';
import type { Resolver } from '../dns/resolver';
import type { Events } from '../events';
import { type BounceClassifier, replyInput } from '../mail/bounce-class';
import type { EventCounts } from '../telemetry';
import { ByteBudget } from '../limits/budget';
import { log } from '../log';
import { localReply, verdict } from '../mail/smtp-reply';
import { Verp } from '../mail/verp';
import { composeEmail, composeEmailStream, openContent } from '../sending/message';
import type { DomainRec, EmailRec, QueueEntry, Store, Tx } from '../store';
import { DueService } from '../work/due-service';
import { nextAttemptAt, windowOver } from '../work/retry';
import { type AttemptResult, attemptDelivery, type Route } from './attempt';
import { ClaimRound, claimVerdict, type Holds, holdsOf, isHeld, leased } from './claim';
import { inFlightKey, SitesInFlight } from './in-flight';
import { MtaSts } from './mta-sts';
import { ConnectionPool, DEFAULT_POOL, type PoolOptions } from './pool';
import { routeAttempt } from './route';
import { simulatedAttempt } from './sandbox';
import { type Found, goOnFrom, memoryAfter, type ScanMemory, scanDue } from './scan';
import { recordIncident, senderReplies } from './incidents';
import { type Counts, putBack, recordTls, retried, retryDue, settleRecipients, settleScope, withAttempt, attemptRecord, classesOf, replyFor } from './settle';
import { Shaper, SiteRules } from './shaping';
import { SigningPool } from './signers';
import type { OutgoingMessage } from './smtp-client';
import { Readable } from 'node:stream';
import { INSTALL_TEAM, SendingIps } from './ips';

/** How often the sending IPs' counts are written to the store (ips.ts). */
const IPS_FLUSH_MS = 5_000;

/** What the engine needs. */
export interface DeliveryDeps {
  store: Store;
  events: Events;
  dns: Resolver;
  config: Pick<Config, 'delivery' | 'smtp' | 'public_url' | 'security'>;
  /** The bounce classes' rules (mail/bounce-class.ts), compiled once per thread. */
  bounces: BounceClassifier;
  /** Where replies are counted by class and site (GET /metrics); none in tests that do not read it. */
  counts?: EventCounts;
}

export interface EngineOptions {
  /** Attempts in flight at once, across all destinations. */
  concurrency?: number;
  /** DKIM signing threads (default: signers.ts DEFAULT_SIGNERS). */
  signers?: number;
  pool?: Partial<PoolOptions>;
}

/** An entry taken for an attempt, already persisted at `due` (its next attempt time). */
interface Claimed {
  entry: QueueEntry;
  /** The entry as it was before the claim (a shaping wait puts it back so). */
  before: QueueEntry;
  due: number;
  domain: DomainRec;
  /** The email as claimed: what its message is composed from. */
  email: EmailRec;
}

interface Attempted {
  result: AttemptResult;
  started: number;
}

/**
 * The engine's claims and outcomes wait for its commit under way and go together in the next (group
 * commit, store/lmdb/env.ts): fewer, larger commits, a few milliseconds later; nobody waits for them.
 */
const PATIENT = { patient: true } as const;
/** A claim also writes this node's leases: another node takes them over at once if it dies. */
const CLAIM = { patient: true, lease: true } as const;

/** Bytes of messages held by delivery attempts at once. */
export const MESSAGE_BUDGET = 64 * 1024 * 1024;
/** Stored parts from which a message is streamed through its attempt rather than composed whole (as large bodies are read, api/platform/body.ts). */
export const STREAM_MESSAGE_FROM = 1024 * 1024;
/** Bodies smaller than this are read with their size, before the attempt takes its share of MESSAGE_BUDGET. */
const READ_WITH_SIZE_BELOW = 64 * 1024;

/** The DKIM-Signature header, then the message composed afresh. */
async function* signedStream(header: Buffer, message: () => Readable): AsyncGenerator<Uint8Array> {
  yield header;
  yield* message();
}

export class DeliveryEngine extends DueService<Claimed, Attempted> {
  readonly verp: Verp;
  readonly pool: ConnectionPool;
  /** DKIM signing, on threads of its own. */
  private readonly signers: SigningPool;
  private readonly budget = new ByteBudget(MESSAGE_BUDGET);
  readonly shaper: Shaper;
  /** The site of every attempt in flight. */
  private readonly flying = new SitesInFlight();
  /** When entries the last claim passed over for a short rate wait may go. */
  private nextRoom: number | null = null;
  /** What the last claim's scan saw (scan.ts): the next claim may go on from it. */
  private scanned: ScanMemory | null = null;
  /** MTA-STS policies (direct mode, `delivery.mta_sts.enabled`), and the extra authorities MX certificates may chain to. */
  private readonly mtaSts: { lookup: MtaSts['lookup']; ca: string[] } | undefined;
  /** The sending IPs of `delivery.ips` and their pools (ips.ts); not enabled when none are set. */
  readonly ips: SendingIps;
  private ipsTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly svc: DeliveryDeps,
    opts: EngineOptions = {},
  ) {
    // As many attempts at once as Postfix's delivery agents (default_process_limit): one destination
    // holds at most its share (claim.ts), so the others always keep most of them.
    super({ name: 'delivery', concurrency: opts.concurrency ?? 100, graceMs: 10_000 });
    this.verp = new Verp(svc.store.secret('verp'));
    this.pool = new ConnectionPool({ ...DEFAULT_POOL, ...opts.pool });
    this.signers = new SigningPool(opts.signers);
    // A relay shapes its own traffic: there, every domain is its own site with the pool's defaults.
    const { shaping, mode } = svc.config.delivery;
    this.shaper = new Shaper(new SiteRules(shaping), shaping.enabled && mode === 'direct');
    this.ips = new SendingIps(svc.config.delivery);
    const sts = svc.config.delivery.mta_sts;
    if (sts.enabled && mode === 'direct') {
      const ca = sts.ca_file ? pemCertificates(readFileSync(sts.ca_file, 'utf8')) : [];
      const policies = new MtaSts({ store: svc.store, dns: svc.dns, ca, port: sts.port, allowPrivate: svc.config.security.allow_private_networks });
      this.mtaSts = { lookup: (domain) => policies.lookup(domain), ca };
    }
  }

  override async start(): Promise<void> {
    // In cluster mode an entry in flight may be another node's: it waits for its lease instead.
    if (this.svc.store.exclusive) await this.resumeInterrupted();
    await this.signers.ready();
    if (this.ips.enabled) {
      await this.syncIps();
      this.ipsTimer = setInterval(
        () => void this.syncIps().catch((e: unknown) => log.warn('delivery.ips_sync_failed', { error: (e as Error).message })),
        IPS_FLUSH_MS,
      );
      this.ipsTimer.unref?.();
    }
    super.start();
    log.info('delivery.started', { mode: this.svc.config.delivery.mode, queued: await this.svc.store.queue.size(), signers: this.signers.size });
  }

  /**
   * Stop taking work and let attempts in flight finish for up to `graceMs`; after that their
   * connections are dropped and their outcomes not recorded — each entry is already persisted at
   * its next attempt time, so it is simply retried after a restart.
   */
  override async stop(graceMs = 10_000): Promise<boolean> {
    const finished = await super.stop(graceMs);
    if (finished) this.pool.close();
    if (this.ipsTimer) {
      clearInterval(this.ipsTimer);
      this.ipsTimer = null;
      await this.syncIps().catch(() => {});
    }
    this.signers.close();
    return finished;
  }

  /**
   * Entries whose attempt was in flight in a process that is gone have no outcome: they are due
   * now rather than at the retry time their claim set (Postfix likewise puts its active queue back
   * to work when it starts). One process owns the LMDB queue, so at start every such entry is ours
   * (store.exclusive); in cluster mode each waits for its lease, the next attempt time its claim persisted.
   */
  private async resumeInterrupted(): Promise<void> {
    const resumed = await this.svc.store.write(async (tx) => {
      const now = Date.now();
      let n = 0;
      for (const { entry } of await tx.queue.due(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) {
        if (!entry.attempting) continue;
        tx.queue.put({ ...entry, attempting: null }, now);
        n++;
      }
      return n;
    });
    if (resumed) log.warn('delivery.resumed_interrupted', { entries: resumed });
  }

  /**
   * The sending IPs' state and the store's, in one unit of work: the engine writes its counts, held
   * ramps and failed binds; the warm-up schedule is POST /ips/{ip}/warmup's, read back from there.
   */
  private async syncIps(): Promise<void> {
    const now = Date.now();
    const changed = new Map(this.ips.changed(now).map((r) => [r.id, r]));
    const stored = await this.svc.store.write(async (tx) => {
      const out = [];
      for (const ip of this.ips.list) {
        const cur = await tx.sendingIps.get(INSTALL_TEAM, ip.address);
        const mine = changed.get(ip.address);
        if (mine) {
          // Complaints are the feedback's to write (feedback/sending-ips.ts), whichever node took the report.
          const next = cur ? { ...mine, warmup: { ...cur.warmup, held: mine.warmup.held, slowed: mine.warmup.slowed }, complaints: cur.complaints } : mine;
          tx.sendingIps.put(next);
          out.push(next);
        } else if (cur) out.push(cur);
      }
      return out;
    });
    // A listed address leaves rotation at this look, and comes back at the first after its delisting.
    this.ips.setListed(await listedTargets(this.svc.store));
    if (!this.ipsLoaded) {
      this.ips.load(stored);
      this.ipsLoaded = true;
      // Addresses seen for the first time get their record (a warm-up ramp starts today).
      for (const ip of this.ips.list) this.ips.record(ip.address, now);
    } else for (const r of stored) this.ips.adopt(r);
  }

  private ipsLoaded = false;

  protected nextDue(): Promise<number | null> {
    return this.svc.store.queue.nextDue();
  }

  protected key(c: Claimed): string {
    return inFlightKey(c.entry.domain, c.entry.id);
  }

  /** stop() gave up waiting: hanging attempts end with their connections. */
  protected override abandon(): void {
    this.pool.close(true);
  }

  protected override wakeAt(): number | null {
    return this.nextRoom;
  }

  /**
   * In one commit: take up to `max` due entries not already in flight (the scan, scan.ts), decide
   * what each is (claim.ts) — passed over for room, held, dropped, failed, or moved to its next
   * attempt time with attempts+1 — and fire `email.sent` for emails leaving `queued`.
   */
  protected async claim(max: number, busy: ReadonlySet<string>): Promise<Claimed[]> {
    const { store } = this.svc;
    // Nothing due now (the queue's head is later, or everything is held): no unit of work. Mail
    // queued held, or committed while the queue waits for later retries, wakes this loop without
    // taking the write lock from the accept path. Something committed after this read kicks again.
    const next = await store.queue.nextDue();
    if (next === null || next > Date.now()) return [];
    const perSite = this.flying.count(busy);
    return store
      .write(async (tx) => {
        const now = Date.now();
        this.shaper.sync(await tx.sites.all());
        const holds = holdsOf(await tx.queueHolds.all());
        const last = goOnFrom(this.scanned, now, store.exclusive);
        const round = new ClaimRound(this.shaper, now, perSite, busy, holds, last?.sites);
        const { found, end } = await scanDue(tx.queue, now, max, last, round);
        // The round's passed-over sites: those it adds while taking (below) count for the next scan too.
        this.scanned = memoryAfter(end, now, last, round.passedSites);
        const out = await this.take(tx, found, max, round, holds, now);
        for (const m of round.moves) tx.queue.defer(m.domain, m.id, m.from, m.to);
        this.nextRoom = round.soonest;
        return out;
      }, CLAIM)
      .catch((e: unknown) => {
        // Nothing of it was written: what it took is still due where the last scan saw it.
        this.scanned = null;
        throw e;
      });
  }

  /** The entries the scan read, each held, passed over, dropped, failed or taken (claim.ts). */
  private async take(tx: Tx, found: Found[], max: number, round: ClaimRound, holds: Holds, now: number): Promise<Claimed[]> {
    const out: Claimed[] = [];
    const failed = new Set<string>(); // emails failed in this claim: their other entries are gone
    // Every email and sending domain the claim may need, asked for at once: PostgreSQL answers the
    // reads of one unit in one pipeline, not a round trip per entry (docs/ARCHITECTURE.md §3).
    const emails = await readAll(
      found,
      (f) => f.entry.email_id,
      (f) => tx.emails.get(f.entry.team_id, f.entry.email_id),
    );
    const domains = await readAll(
      [...emails.values()].filter((e) => e !== undefined),
      (e) => `${e.team_id}/${e.domain_id}`,
      (e) => tx.domains.get(e.team_id, e.domain_id),
    );
    for (const { due: was, entry } of found) {
      if (out.length >= max) break;
      if (failed.has(entry.email_id)) continue;
      if (isHeld(holds, entry)) {
        tx.queue.put({ ...entry, held: 'destination' }, was);
        continue;
      }
      const site = round.admitRead(entry, was);
      if (site === null) continue;
      // The body is not read here: an attempt reads it when it runs and lets it go after, so what
      // waits in the queue is never held in memory.
      const email = emails.get(entry.email_id);
      const decision = claimVerdict(email, email && domains.get(`${email.team_id}/${email.domain_id}`));
      if (decision.kind === 'drop') {
        tx.queue.remove(entry);
        log.warn('delivery.dropped', { team_id: entry.team_id, email_id: entry.email_id, entry_id: entry.id, reason: decision.reason });
        continue;
      }
      if (decision.kind === 'fail') {
        await this.fail(tx, decision.email, decision.reason);
        failed.add(decision.email.id);
        continue;
      }
      // Persisted before the attempt: if the process dies during it, this is when it is retried.
      const { next, due } = leased(entry, now, this.svc.config.delivery);
      tx.queue.put(next, due);
      // An earlier entry's `sent` in this claim is in `emails` (below). Counted under the provider
      // the claim expects (the first attempt corrects it: Events.attribute).
      const claimed = decision.email.sent_at
        ? decision.email
        : await this.svc.events.email(tx, decision.email, 'sent', { current: true, site: this.shaper.rules.provider(site, entry.domain) });
      emails.set(claimed.id, claimed);
      out.push({ entry: next, before: entry, due, domain: decision.domain, email: claimed });
      round.took(site);
      this.flying.set(inFlightKey(next.domain, next.id), site);
    }
    return out;
  }

  /** The email cannot be sent any more; every entry of it leaves the queue. */
  private async fail(tx: Tx, email: EmailRec, reason: string): Promise<void> {
    const recipients: string[] = [];
    for (const e of await tx.queue.entriesOf(email.team_id, email.id)) {
      recipients.push(...e.recipients);
      tx.queue.remove(e);
    }
    await this.svc.events.email(tx, email, 'failed', { recipients, failed: { reason } });
    log.warn('delivery.failed', { team_id: email.team_id, email_id: email.id, domain_id: email.domain_id, reason });
  }

  /** The attempt (attempt.ts), with the message composed and signed only once a destination answers. */
  protected async attempt(c: Claimed): Promise<Attempted> {
    const started = Date.now();
    // Sandbox addresses (docs/api.md §7.11): nothing is read, composed, looked up or sent.
    const simulated = this.svc.config.delivery.sandbox ? simulatedAttempt(c.entry) : null;
    if (simulated) return { result: simulated, started };
    const from = this.verp.sender(c.entry.email_id, c.domain, c.entry.domain);
    const { emailContent } = this.svc.store;
    // The message is in memory only during its attempt, and only MESSAGE_BUDGET of them at once:
    // three times its parts (the parts read, the message composed from them in base64, what
    // signing and sending hold beside it) — far more than a streamed one holds (its files are read
    // in pieces), kept so that no more large attempts than before are in flight at once.
    // A small body (nearly all) is read with its size, in one read; it may then wait for the
    // attempt's share of the budget in memory already, at most READ_WITH_SIZE_BELOW bytes.
    const sized = await emailContent.sized(c.entry.team_id, c.entry.email_id, READ_WITH_SIZE_BELOW);
    // Deleted since the claim (retention): the outcome finds no email and records nothing.
    if (sized === undefined) return { result: noLongerStored(c.entry), started };
    const { size } = sized;
    const release = await this.budget.take(3 * size);
    // The attachment files a streamed composition opened: closed when the attempt ends, read to
    // their end or not (a connection lost mid-message leaves its stream unread).
    const opened: Readable[] = [];
    try {
      const message = async (): Promise<OutgoingMessage> => {
        const keys = signingKeys(c.domain);
        if (size < STREAM_MESSAGE_FROM) {
          const content = sized.content ?? (await emailContent.get(c.entry.team_id, c.entry.email_id));
          if (!content) throw new Error('the message is no longer stored');
          return this.signers.sign(await composeEmail(this.svc, c.email, content, c.domain), keys);
        }
        // A large message is composed twice — to sign, then to send — and never held whole, its
        // attachments read from their files as they are composed: the same bytes, as composing is
        // deterministic (sending/message.ts).
        const stored = await openContent(emailContent, c.email);
        if (!stored) throw new Error('the message is no longer stored');
        const { content } = stored;
        const open = Object.fromEntries(
          Object.entries(stored.open).map(([id, read]) => [
            id,
            () => {
              const r = read();
              opened.push(r);
              return r;
            },
          ]),
        );
        const stream = composeEmailStream(this.svc, c.email, content, c.domain, open);
        const signed = stream && (await this.signers.signPieces(stream(), keys));
        if (stream && signed) return { size: signed.size, open: () => Readable.from(signedStream(signed.header, stream), { objectMode: false }) };
        return this.signers.sign(await composeEmail(this.svc, c.email, content, c.domain, open), keys);
      };
      const result = await attemptDelivery(
        { entry: c.entry, domain: c.domain, message, from },
        {
          config: this.svc.config,
          dns: this.svc.dns,
          pool: this.pool,
          route: (domain, hosts) => this.route(c, domain, hosts),
          mtaSts: this.mtaSts,
          siteRelay: (site) => this.shaper.rules.relay(site),
          ...(this.ips.enabled
            ? {
                source: {
                  choose: (site: string) => this.ips.choose(c.domain.pool ?? 'default', site, Date.now()),
                  bindFailed: (address: string, reason: string) => {
                    log.warn('delivery.ip_bind_failed', { ip: address, reason });
                    this.ips.bindFailed(address, reason, Date.now());
                  },
                },
              }
            : {}),
        },
      );
      return { result, started };
    } finally {
      for (const r of opened) r.destroy();
      release();
    }
  }

  /** Where an attempt's connections go once its MX hosts are known (route.ts). */
  private route(c: Claimed, domain: string, hosts: string[]): Route {
    return routeAttempt(this.shaper, this.flying, inFlightKey(c.entry.domain, c.entry.id), domain, hosts, Date.now());
  }

  /** The attempt's outcome: put back when it did not happen, else recorded (settle.ts) and logged. */
  protected async settle(c: Claimed, { result, started }: Attempted): Promise<void> {
    if (result.deferred !== undefined) return this.putBack(c, result.deferred);
    const counts = await this.record(c, result, started);
    const problem = [...result.replies.values()].find((r) => verdict(r) !== 'delivered');
    log.info('delivery.attempt', {
      team_id: c.entry.team_id,
      email_id: c.entry.email_id,
      entry_id: c.entry.id,
      domain: c.entry.domain,
      site: result.site,
      attempt: c.entry.attempts,
      host: result.host,
      ip: result.ip,
      tls: result.tls,
      simulated: result.simulated,
      duration_ms: Date.now() - started,
      ...counts,
      reply: problem?.text,
    });
  }

  /**
   * The attempt did not happen: its site had no room when its MX showed which site it is. The
   * entry goes back as it was before the claim, due when the site has room.
   */
  private putBack(c: Claimed, due: number): Promise<void> {
    const { entry, before } = c;
    return this.svc.store.write(async (tx) => {
      const live = (await tx.queue.entriesOf(entry.team_id, entry.email_id)).find((e) => e.id === entry.id);
      if (!live) return;
      tx.queue.put(putBack(live, before, this.shaper.siteOf(entry.domain)), due);
    }, PATIENT);
  }

  /**
   * Record an attempt's outcome, every recipient in one commit (settle.ts): what its replies do to
   * the site, the attempt kept on the email, its TLS-RPT counts, each recipient's event, and the
   * entry waiting for its retry with who is left, or leaving the queue.
   */
  private record(c: Claimed, result: AttemptResult, started: number): Promise<Counts> {
    const { store, events, config, bounces, counts } = this.svc;
    const { entry } = c;
    const site = result.site ?? this.shaper.siteOf(entry.domain);
    // The mailbox provider its events count under (docs/api.md §7.9) and replies are labelled with.
    const provider = this.shaper.rules.provider(site, entry.domain, result.host);
    // Each reply's bounce class (a few µs each, outside the unit of work: it may run again).
    const classes = classesOf(entry, result, bounces);
    const refusals = (result.refusals ?? []).map((reply) => ({ reply, class: bounces.classify(replyInput(reply)) }));
    const sender = senderReplies(
      entry.recipients.map((r) => ({ reply: replyFor(result, r), class: classes.get(r) ?? null })),
      { host: result.host, ip: result.ip ?? null, refusedBy: result.refusedBy },
      refusals,
    );
    return store.write(async (tx) => {
      // Both reads at once (one round trip on PostgreSQL).
      const [email, entries] = await Promise.all([tx.emails.get(entry.team_id, entry.email_id), tx.queue.entriesOf(entry.team_id, entry.email_id)]);
      const live = entries.find((e) => e.id === entry.id);
      const scope = settleScope(email, live, entry);
      if (!email || !scope) return { delivered: 0, deferred: 0, bounced: 0 };
      const now = Date.now();
      // What the replies do to the site (a throttling reply, or one of the sender's, suspends it), committed with them.
      const change = this.shaper.outcome(site, [...result.replies.values(), ...(result.refusals ?? [])], now, sender[0]?.reply ?? null);
      if (change) {
        if (change.put) tx.sites.put(change.put);
        else tx.sites.remove(change.remove);
        tx.afterCommit(() => this.shaper.apply(change));
      }
      // Replies that speak of the sender are incidents (incidents.ts), recorded with the attempt.
      const suspendedUntil = change?.put?.suspended_until ?? this.shaper.suspended(site, now);
      for (const s of sender)
        await recordIncident(tx, events, { ...s, team: entry.team_id, site, sendingIp: result.localIp ?? null, email, at: now, suspendedUntil });
      // A sending IP's counts at the site (its warm-up allowance), and its suspension there after a reply of the sender's classes.
      const source = result.source;
      if (source) {
        const n = { deferred: 0, bounced: 0 };
        for (const r of result.replies.values()) {
          const v = verdict(r);
          if (v === 'temporary') n.deferred++;
          else if (v === 'permanent') n.bounced++;
        }
        tx.afterCommit(() => {
          this.ips.outcome(source, site, now, n);
          if (sender.length && suspendedUntil) this.ips.suspend(source, site, suspendedUntil);
        });
      }
      // The email's first attempt shows its provider: its counters go there (Events.attribute).
      const sited = email.attempts?.length ? email : events.attribute(tx, email, provider, result.source);
      // Every attempt is kept on the email (docs/api.md §7.3), beside the events it leads to.
      const attempted = withAttempt(sited, attemptRecord(entry, result, started, now, classes));
      // TLS-RPT data (RFC 8460) of the destination's policy, committed with the attempt it comes from.
      if (result.sts) recordTls(tx, entry.team_id, entry.domain, result.sts, started);
      // Replies by class and provider for GET /metrics, once committed.
      if (counts)
        tx.afterCommit(() => {
          for (const cls of classes.values()) if (cls) counts.reply(cls, provider);
        });
      const over = windowOver(entry.first_attempt_at, config.delivery.retry_window, now);
      const settled = await settleRecipients(
        tx,
        events,
        attempted,
        entry,
        result,
        { windowOver: over, canceled: scope === 'canceled' },
        classes,
        site,
        provider,
      );
      if (!settled.stored) tx.emails.put(settled.email);
      if (!live) return settled.counts;
      if (!settled.retry) {
        tx.queue.remove(live);
        return settled.counts;
      }
      const scheduled = nextAttemptAt(config.delivery.retry_schedule, live.attempts, live.first_attempt_at, config.delivery.retry_window, now);
      const due = retryDue(scheduled, suspendedUntil, (until) => this.shaper.spread(site, until, now, 0));
      tx.queue.put(retried(live, settled.retry.recipients, settled.retry.lastError, site), due);
      return settled.counts;
    }, PATIENT);
  }
}

/** `read` of each distinct key of `items`, all asked for at once: by key. */
async function readAll<I, R>(items: I[], key: (i: I) => string, read: (i: I) => Promise<R>): Promise<Map<string, R>> {
  const first = new Map<string, I>();
  for (const i of items) if (!first.has(key(i))) first.set(key(i), i);
  const values = await Promise.all([...first.values()].map(read));
  return new Map([...first.keys()].map((k, n) => [k, values[n]!]));
}

/** The outcome of an attempt whose message was deleted since its claim (retention). */
function noLongerStored(entry: QueueEntry): AttemptResult {
  return { replies: new Map(entry.recipients.map((r) => [r, localReply(451, '4.3.0', 'the message is no longer stored')])), host: null, tls: null };
}

/** The certificates of a PEM bundle, one string each (`delivery.mta_sts.ca_file`). */
export function pemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}
