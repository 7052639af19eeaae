// The delivery engine: a loop that takes due queue entries, persists each one at its next attempt
// time *before* trying it ("persist before acting", docs/ARCHITECTURE.md — a crash mid-attempt
// means a retry), runs the attempts concurrently, and records every recipient's outcome through
// the one event function, all outcomes of one attempt in one commit:
//   2xx → delivered; 5xx → bounced (Permanent) + suppression; 4xx or no connection → retried,
//   delivery_delayed on a recipient's first temporary failure, bounced (Transient) once the
//   retry window is over (docs/mail.md §3, docs/api.md §7.8, §14.2).
// The loop itself (sleep until due or kicked, concurrency, graceful stop) is the shared DueWorker.
// Shaping (shaping.ts, docs/mail.md §3.1) decides per destination site how many attempts run at
// once and how fast; a claim passes over what has no room by the queue key alone, and moves the
// entries of a suspended site out of the way until it resumes. Held entries (docs/api.md §19.7)
// are out of the due range; entries queued to a held destination since are held when queued
// (QueueTx.add), or at their claim when they escaped that (an attempt in flight at the hold).
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import type { Events } from '../events';
import {
  MAX_ATTEMPTS,
  QUEUE_SCAN_LIMIT,
  type DeliveryAttempt,
  type DomainRec,
  type EmailRec,
  type QueueEntry,
  type Store,
  type TlsReportPolicy,
  type Tx,
} from '../store';
import { canSendFrom } from '../domains/records';
import { signingKeys } from '../domains/dkim';
import { suppress } from '../suppressions';
import { log } from '../log';
import { attemptDelivery, type AttemptResult, type StsOutcome } from './attempt';
import { ConnectionPool, DEFAULT_POOL, type PoolOptions } from './pool';
import { Shaper, SiteRules, type Room } from './shaping';
import type { Route } from './attempt';
import { bounceFor, enhancedCode, localReply, verdict, type Reply } from '../mail/smtp-reply';
import { recipientKey } from '../events';
import { Verp } from '../mail/verp';
import { nextAttemptAt, windowOver } from '../work/retry';
import { DueWorker } from '../work/due-worker';
import { ByteBudget } from '../limits/budget';
import { composeEmail } from '../sending/message';
import { SigningPool } from './signers';
import { MtaSts } from './mta-sts';
import { readFileSync } from 'node:fs';

/** What the engine needs. */
export interface DeliveryDeps {
  store: Store;
  events: Events;
  dns: Resolver;
  config: Pick<Config, 'delivery' | 'smtp' | 'public_url' | 'security'>;
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

/** A key of the queue's due order. */
interface QueueKey {
  due: number;
  domain: string;
  id: string;
}

/** Identity of an attempt in flight: its destination domain, then the entry. */
const inFlightKey = (e: QueueEntry) => `${e.domain}\u0000${e.id}`;

/**
 * A claim scans the due entries from the start at least this often; between such scans it looks
 * only at the sites it passed over and at what became due since (claim). With one busy destination
 * thousands of entries deep, a scan from the start per freed slot cost more than the attempt itself.
 * A scan from the start also finds what no other scan could: an entry committed by another thread
 * with a due time before the last scan's, or a destination whose site changed when its MX was learned.
 * A backlog deeper than QUEUE_SCAN_LIMIT is gone through in steps of that many keys, one claim each
 * (`resume`), before the next scan from the start.
 */
const FULL_SCAN_MS = 500;

/**
 * The engine's claims and outcomes wait for its commit under way and go together in the next (group
 * commit, store/lmdb/env.ts): fewer, larger commits, a few milliseconds later; nobody waits for them.
 */
const PATIENT = { patient: true } as const;

/** Bytes of messages held by delivery attempts at once. */
export const MESSAGE_BUDGET = 64 * 1024 * 1024;

export class DeliveryEngine {
  readonly verp: Verp;
  readonly pool: ConnectionPool;
  /** DKIM signing, on threads of its own. */
  private readonly signers: SigningPool;
  private readonly budget = new ByteBudget(MESSAGE_BUDGET);
  private readonly worker: DueWorker<Claimed, Attempted>;
  readonly shaper: Shaper;
  /** The site of every attempt in flight, by its key (the worker's busy set is the truth: see claim). */
  private readonly flying = new Map<string, string>();
  /** When entries the last claim passed over for a short rate wait may go. */
  private nextRoom: number | null = null;
  /**
   * What the last claim's scan of the due entries saw, when it saw all of them, or all up to the
   * scan limit: up to when, the sites of the entries it passed over for room, when a claim last
   * scanned from the start — and, for a scan the limit cut short, the last key it looked at.
   */
  private scanned: { upTo: number; fullAt: number; sites: Set<string>; resume?: QueueKey } | null = null;
  /** MTA-STS policies (direct mode, `delivery.mta_sts.enabled`), and the extra authorities MX certificates may chain to. */
  private readonly mtaSts: { lookup: MtaSts['lookup']; ca: string[] } | undefined;

  constructor(
    private readonly svc: DeliveryDeps,
    opts: EngineOptions = {},
  ) {
    this.verp = new Verp(svc.store.secret('verp'));
    this.pool = new ConnectionPool({ ...DEFAULT_POOL, ...opts.pool });
    this.signers = new SigningPool(opts.signers);
    // A relay shapes its own traffic: there, every domain is its own site with the pool's defaults.
    const { shaping, mode } = svc.config.delivery;
    this.shaper = new Shaper(new SiteRules(shaping), shaping.enabled && mode === 'direct');
    const sts = svc.config.delivery.mta_sts;
    if (sts.enabled && mode === 'direct') {
      const ca = sts.ca_file ? pemCertificates(readFileSync(sts.ca_file, 'utf8')) : [];
      const policies = new MtaSts({ store: svc.store, dns: svc.dns, ca, port: sts.port, allowPrivate: svc.config.security.allow_private_networks });
      this.mtaSts = { lookup: (domain) => policies.lookup(domain), ca };
    }
    this.worker = new DueWorker(
      'delivery',
      {
        nextDue: () => svc.store.queue.nextDue(),
        claim: (max, busy) => this.claim(max, busy),
        key: (c) => inFlightKey(c.entry),
        attempt: (c) => this.attempt(c),
        settle: (c, a) => this.record(c, a),
        abandon: () => this.pool.close(true),
        wakeAt: () => this.nextRoom,
      },
      // As many as Postfix's delivery agents (default_process_limit): one destination holds at most
      // its share (below), so the others always keep most of them.
      opts.concurrency ?? 100,
    );
  }

  async start(): Promise<void> {
    // In cluster mode an entry in flight may be another node's: it waits for its lease instead.
    if (this.svc.store.exclusive) await this.resumeInterrupted();
    await this.signers.ready();
    this.worker.start();
    log.info('delivery.started', { mode: this.svc.config.delivery.mode, queued: await this.svc.store.queue.size(), signers: this.signers.size });
  }

  /**
   * Stop taking work and let attempts in flight finish for up to `graceMs`; after that their
   * connections are dropped and their outcomes not recorded — each entry is already persisted at
   * its next attempt time, so it is simply retried after a restart.
   */
  async stop(graceMs = 10_000): Promise<void> {
    if (await this.worker.stop(graceMs)) this.pool.close();
    this.signers.close();
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

  /** New entries are due: look at the queue now. */
  kick(): void {
    this.worker.kick();
  }

  /** Resolves once nothing is due now and no attempt is in flight (tests). */
  idle(): Promise<void> {
    return this.worker.idle();
  }

  /**
   * In one commit: take up to `max` due entries not already in flight, move each to its next
   * attempt time with attempts+1, and fire `email.sent` for emails leaving `queued`. Entries whose
   * email is gone (retention) are dropped; emails whose domain was deleted or lost verification
   * are marked `failed` (no webhook) and leave the queue. Shaping: entries of a site with no room
   * are passed over by key; a suspended site's are moved to its end (spread out); entries queued to
   * a destination their team holds are held.
   */
  private async claim(max: number, busy: ReadonlySet<string>): Promise<Claimed[]> {
    const { store, events, config } = this.svc;
    // Nothing due now (the queue's head is later, or everything is held): no unit of work. Mail
    // queued held, or committed while the queue waits for later retries, wakes this loop without
    // taking the write lock from the accept path. Something committed after this read kicks again.
    const next = await store.queue.nextDue();
    if (next === null || next > Date.now()) return [];
    const shaper = this.shaper;
    // Attempts in flight per site: one slow destination may hold at most its share of connections,
    // never every worker slot (its other entries wait in the queue, not in the pool).
    for (const key of this.flying.keys()) if (!busy.has(key)) this.flying.delete(key);
    const perSite = new Map<string, number>();
    for (const site of this.flying.values()) perSite.set(site, (perSite.get(site) ?? 0) + 1);
    return store
      .write(async (tx) => {
        const now = Date.now();
        shaper.sync(await tx.sites.all());
        const holds = await tx.queueHolds.all();
        const heldDomains = new Set(holds.map((h) => h.destination));
        const heldBy = new Set(holds.map((h) => `${h.team_id}\u0000${h.destination}`));
        const out: Claimed[] = [];
        const failed = new Set<string>(); // emails failed in this claim: their other entries are gone
        const room = new Map<string, Room>();
        const deferred = new Map<string, number>(); // entries moved per site, for spreading them
        const moves: { domain: string; id: string; from: number; to: number }[] = [];
        let soonest: number | null = null;
        /** May one more attempt for `site` start (counted if so)? If not, a suspended site's entry moves. */
        const admit = (site: string, domain: string, id: string, due: number): boolean => {
          let r = room.get(site);
          if (!r) {
            r = shaper.room(site, now, perSite.get(site) ?? 0);
            room.set(site, r);
          }
          if (r.n > 0) {
            r.n--;
            return true;
          }
          if (r.until !== null) {
            const nth = deferred.get(site) ?? 0;
            deferred.set(site, nth + 1);
            moves.push({ domain, id, from: due, to: shaper.spread(site, r.until, now, nth) });
          } else {
            const wait = shaper.waitFor(site, now);
            if (wait > 0) soonest = Math.min(soonest ?? Infinity, now + wait);
          }
          return false;
        };
        const passedAs = new Map<string, string>();
        // The sites with entries passed over for room: the next claim's scan stops early on them.
        // A scan going through a backlog deeper than the scan limit goes on to its end before the
        // next scan from the start.
        const last = store.exclusive && this.scanned && (now - this.scanned.fullAt < FULL_SCAN_MS || this.scanned.resume) ? this.scanned : null;
        const passedSites = new Set<string>(last?.sites);
        let looked = 0;
        // Set by `pass`, a callback: declared so that the compiler does not take it for always null.
        let lastLooked = null as QueueKey | null;
        // In flight, or no room for its site: passed over by key alone. A domain someone holds is
        // read: the entry may be its team's, to be held.
        const pass = (domain: string, id: string, due: number) => {
          looked++;
          lastLooked = { due, domain, id };
          if (busy.has(`${domain}\u0000${id}`)) return true;
          if (heldDomains.has(domain)) return false;
          const site = shaper.siteOf(domain);
          passedAs.set(domain, site);
          if (admit(site, domain, id, due)) return false;
          passedSites.add(site);
          return true;
        };
        let found: { due: number; entry: QueueEntry }[];
        let whole: boolean;
        /** The scan looked at QUEUE_SCAN_LIMIT keys without filling the slots: where the next goes on. */
        let resume: QueueKey | null = null;
        if (!last) {
          found = await tx.queue.due(now, max, pass);
          whole = found.length < max && looked < QUEUE_SCAN_LIMIT;
          if (found.length < max && looked >= QUEUE_SCAN_LIMIT) resume = lastLooked;
        } else {
          // Up to the last scan, what waits is the entries that scan passed over for room (the rest
          // were taken then and moved to their next attempt time): once none of their sites has room
          // left, the scan stops there and goes on from the last one's end, with what became due since.
          const noRoom = () => {
            for (const site of last.sites) {
              let r = room.get(site);
              if (!r) {
                r = shaper.room(site, now, perSite.get(site) ?? 0);
                room.set(site, r);
              }
              if (r.n > 0) return false;
            }
            return true;
          };
          const head = noRoom() ? [] : await tx.queue.due(Math.min(now, last.upTo), max, (d, i, t) => (pass(d, i, t) ? (noRoom() ? 'stop' : true) : false));
          const headWhole = head.length < max && looked < QUEUE_SCAN_LIMIT;
          looked = 0;
          lastLooked = null;
          // After a scan the limit cut short, the tail goes on from its last key: the keys of that
          // due time up to it were looked at (passed over for room) and wait for the next full scan.
          const r = last.resume;
          const seenBefore = (d: string, i: string, t: number) => !!r && t === r.due && (d < r.domain || (d === r.domain && i <= r.id));
          // Counted as looked at, as the queue counts them toward its limit.
          const tailPass: typeof pass = (d, i, t) => {
            if (!seenBefore(d, i, t)) return pass(d, i, t);
            looked++;
            return true;
          };
          const tail = headWhole ? await tx.queue.due(now, max - head.length, tailPass, r ? r.due - 1 : last.upTo) : [];
          found = [...head, ...tail];
          whole = headWhole && tail.length < max - head.length && looked < QUEUE_SCAN_LIMIT;
          if (headWhole && tail.length < max - head.length && looked >= QUEUE_SCAN_LIMIT) resume = lastLooked;
        }
        // A scan the slots cut short saw only part of what is due: the next claim looks at all of it.
        // One the scan limit cut short leaves where it stopped: the next goes on from there, so a
        // backlog deeper than the limit for a site with no room never hides what is due after it.
        // (Keys before the resume point with a due time of their own were all looked at: upTo.)
        this.scanned = whole
          ? { upTo: now, fullAt: last?.fullAt ?? now, sites: passedSites }
          : resume
            ? { upTo: resume.due - 1, fullAt: last?.fullAt ?? now, sites: passedSites, resume }
            : null;
        for (const { due: was, entry } of found) {
          if (out.length >= max) break;
          if (failed.has(entry.email_id)) continue;
          if (heldBy.has(`${entry.team_id}\u0000${entry.domain}`)) {
            tx.queue.put({ ...entry, held: 'destination' }, was);
            continue;
          }
          // The site an earlier attempt found (by MX) counts from now on, for this entry too.
          if (entry.site) shaper.learn(entry.domain, entry.site);
          const site = shaper.siteOf(entry.domain);
          if (passedAs.get(entry.domain) !== site && !admit(site, entry.domain, entry.id, was)) {
            passedSites.add(site);
            continue;
          }
          // The body is not read here: an attempt reads it when it runs and lets it go after, so what
          // waits in the queue is never held in memory.
          const email = await tx.emails.get(entry.team_id, entry.email_id);
          if (!email) {
            tx.queue.remove(entry);
            log.warn('delivery.dropped', { team_id: entry.team_id, email_id: entry.email_id, entry_id: entry.id, reason: 'email no longer stored' });
            continue;
          }
          const domain = await tx.domains.get(email.team_id, email.domain_id);
          if (!domain || !canSendFrom(domain)) {
            await this.fail(tx, email, domain ? 'domain not verified' : 'domain deleted');
            failed.add(email.id);
            continue;
          }
          const attempts = entry.attempts + 1;
          const first_attempt_at = entry.first_attempt_at ?? new Date(now).toISOString();
          // Persisted before the attempt: if the process dies during it, this is when it is retried.
          const due = nextAttemptAt(config.delivery.retry_schedule, attempts, first_attempt_at, config.delivery.retry_window, now);
          const next: QueueEntry = { ...entry, attempts, first_attempt_at, attempting: new Date(now).toISOString() };
          tx.queue.put(next, due);
          // Read above in this unit of work, so an earlier entry's `sent` in this claim is in it.
          out.push({ entry: next, before: entry, due, domain, email: email.sent_at ? email : await events.email(tx, email, 'sent', { current: true }) });
          shaper.take(site, now);
          this.flying.set(inFlightKey(next), site);
          perSite.set(site, (perSite.get(site) ?? 0) + 1);
        }
        for (const m of moves) tx.queue.defer(m.domain, m.id, m.from, m.to);
        this.nextRoom = soonest;
        return out;
      }, PATIENT)
      .catch((e: unknown) => {
        // Nothing of it was written: what it took is still due where the last scan saw it.
        this.scanned = null;
        throw e;
      });
  }

  /**
   * Where an attempt's connections go, once its MX hosts are known: the site they show (which may
   * not be the one the claim assumed — a domain rolls up to a provider by its MX), or a wait when
   * that site has no room now.
   */
  private route(c: Claimed, domain: string, hosts: string[]): Route {
    const now = Date.now();
    const key = inFlightKey(c.entry);
    const site = this.shaper.siteOfRoute(domain, hosts);
    const claimedAs = this.flying.get(key);
    if (site !== claimedAs) {
      this.flying.set(key, site);
      let others = 0;
      for (const [k, s] of this.flying) if (s === site && k !== key) others++;
      const r = this.shaper.room(site, now, others);
      if (r.n <= 0) return { site, defer: r.until ?? now + Math.max(1_000, this.shaper.waitFor(site, now)) };
      this.shaper.take(site, now);
    } else {
      const until = this.shaper.suspended(site, now);
      if (until) return { site, defer: this.shaper.spread(site, until, now, 0) };
    }
    if (!this.shaper.enabled) return { site };
    const lim = this.shaper.limits(site, now);
    return { site, lease: { group: site, maxConnections: lim.max_connections, maxMessages: lim.messages_per_connection } };
  }

  /** The email cannot be sent any more; every entry of it leaves the queue. */
  private async fail(tx: Tx, email: EmailRec, reason: string): Promise<void> {
    const recipients: string[] = [];
    for (const e of await tx.queue.entriesOf(email.team_id, email.id)) {
      recipients.push(...e.recipients);
      tx.queue.remove(e);
    }
    await this.svc.events.email(tx, email, 'failed', { recipients });
    log.warn('delivery.failed', { team_id: email.team_id, email_id: email.id, domain_id: email.domain_id, reason });
  }

  private async attempt(c: Claimed): Promise<Attempted> {
    const started = Date.now();
    const from = this.verp.sender(c.entry.email_id, c.domain, c.entry.domain);
    const { emailContent } = this.svc.store;
    // The message is in memory only during its attempt, and only MESSAGE_BUDGET of them at once:
    // three times its parts (the parts read, the message composed from them in base64, what
    // signing and sending hold beside it).
    const size = await emailContent.byteSize(c.entry.team_id, c.entry.email_id);
    // Deleted since the claim (retention): the outcome finds no email and records nothing.
    if (size === undefined)
      return {
        result: { replies: new Map(c.entry.recipients.map((r) => [r, localReply(451, '4.3.0', 'the message is no longer stored')])), host: null, tls: null },
        started,
      };
    const release = await this.budget.take(3 * size);
    try {
      const message = async () => {
        const content = await emailContent.get(c.entry.team_id, c.entry.email_id);
        if (!content) throw new Error('the message is no longer stored');
        return composeEmail(this.svc, c.email, content, c.domain);
      };
      const result = await attemptDelivery(
        { entry: c.entry, domain: c.domain, message, from },
        {
          config: this.svc.config,
          dns: this.svc.dns,
          pool: this.pool,
          sign: (raw) => this.signers.sign(raw, signingKeys(c.domain)),
          route: (domain, hosts) => this.route(c, domain, hosts),
          mtaSts: this.mtaSts,
        },
      );
      return { result, started };
    } finally {
      release();
    }
  }

  private async record(c: Claimed, { result, started }: Attempted): Promise<void> {
    if (result.deferred !== undefined) return this.putBack(c, result.deferred);
    const counts = await this.settle(c, result, started);
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
      tx.queue.put(
        { ...live, attempts: before.attempts, first_attempt_at: before.first_attempt_at, attempting: null, site: this.shaper.siteOf(entry.domain) },
        due,
      );
    }, PATIENT);
  }

  /** Record an attempt's outcome, every recipient in one commit. */
  private settle(c: Claimed, result: AttemptResult, started: number): Promise<{ delivered: number; deferred: number; bounced: number }> {
    const { store, events, config } = this.svc;
    const { entry } = c;
    const site = result.site ?? this.shaper.siteOf(entry.domain);
    return store.write(async (tx) => {
      const counts = { delivered: 0, deferred: 0, bounced: 0 };
      let email = await tx.emails.get(entry.team_id, entry.email_id);
      const live = (await tx.queue.entriesOf(entry.team_id, entry.email_id)).find((e) => e.id === entry.id);
      if (!email) return counts; // removed meanwhile (retention)
      // Canceled while this attempt was under way (docs/api.md §7.6): what the destination did with
      // the message is still recorded; nothing is tried again.
      const canceled = !live && entry.recipients.some((r) => email!.recipients[recipientKey(email!.recipients, r) ?? r] === 'canceled');
      if (!live && !canceled) return counts; // removed meanwhile (domain failure)
      const now = Date.now();
      // What the replies do to the site (a throttling reply suspends it), committed with them.
      const change = this.shaper.outcome(site, [...result.replies.values(), ...(result.refusals ?? [])], now);
      if (change) {
        if (change.put) tx.sites.put(change.put);
        else tx.sites.remove(change.remove);
        tx.afterCommit(() => this.shaper.apply(change));
      }
      // Every attempt is kept on the email (docs/api.md §7.3), beside the events it leads to.
      const attempt: DeliveryAttempt = {
        at: new Date(started).toISOString(),
        domain: entry.domain,
        host: result.host,
        ip: result.ip ?? null,
        tls: result.tls,
        tls_version: result.tlsVersion ?? null,
        tls_cipher: result.tlsCipher ?? null,
        mta_sts: result.sts?.policy ? (result.sts.policy.mode as 'enforce' | 'testing') : null,
        duration_ms: now - started,
        results: entry.recipients.map((r) => {
          const reply = result.replies.get(r);
          return {
            recipient: r,
            code: reply?.code ?? 451,
            enhanced_code: reply ? enhancedCode(reply) : null,
            reply: reply?.text ?? 'no reply for this recipient',
          };
        }),
      };
      email = { ...email, attempts: [...(email.attempts ?? []), attempt].slice(-MAX_ATTEMPTS) };
      // TLS-RPT data (RFC 8460) of the destination's policy, committed with the attempt it comes from.
      if (result.sts) recordTls(tx, entry.team_id, entry.domain, result.sts, started);
      // The record in hand is the current one: each event stores it (with the attempt), none reads it back.
      const current = true;
      let stored = false;
      const over = windowOver(entry.first_attempt_at, config.delivery.retry_window, now);
      const remaining: string[] = [];
      let lastTemporary: Reply | null = null;
      for (const rcpt of entry.recipients) {
        const reply = result.replies.get(rcpt) ?? localReply(451, '4.4.0', 'no reply for this recipient');
        switch (verdict(reply)) {
          case 'delivered':
            email = await events.email(tx, email, 'delivered', { recipients: [rcpt], current });
            stored = true;
            counts.delivered++;
            break;
          case 'permanent':
            email = await events.email(tx, email, 'bounced', { recipients: [rcpt], bounce: bounceFor(reply, 'Permanent'), current });
            stored = true;
            await suppress(tx, email.team_id, rcpt, 'bounce', email.id);
            counts.bounced++;
            break;
          case 'temporary':
            if (canceled) break;
            if (over) {
              email = await events.email(tx, email, 'bounced', { recipients: [rcpt], bounce: bounceFor(reply, 'Transient'), current });
              stored = true;
              counts.bounced++;
              break;
            }
            // email.delivery_delayed once per recipient: its state is `delayed` from then on.
            if (email.recipients[rcpt] !== 'delayed') {
              email = await events.email(tx, email, 'delivery_delayed', { recipients: [rcpt], current });
              stored = true;
            }
            remaining.push(rcpt);
            lastTemporary = reply;
            counts.deferred++;
        }
      }
      if (!stored) tx.emails.put(email);
      if (!live) return counts;
      // Who is left waits the schedule's time from this failure (the claim's time was only the lease),
      // and never less than a suspension of its site.
      let due = nextAttemptAt(config.delivery.retry_schedule, live.attempts, live.first_attempt_at, config.delivery.retry_window, now);
      const until = change?.put?.suspended_until ?? this.shaper.suspended(site, now);
      if (until && until > due) due = this.shaper.spread(site, until, now, 0);
      if (remaining.length) tx.queue.put({ ...live, recipients: remaining, last_error: lastTemporary!.text, attempting: null, site }, due);
      else tx.queue.remove(live);
      return counts;
    }, PATIENT);
  }
}

/** The certificates of a PEM bundle, one string each (`delivery.mta_sts.ca_file`). */
function pemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** Add an attempt's sessions to its team's TLS-RPT day of the policy domain (docs/api.md §19.8). */
function recordTls(tx: Tx, team: string, domain: string, sts: StsOutcome, at: number): void {
  const { policy } = sts;
  const day = new Date(at).toISOString().slice(0, 10);
  const info: TlsReportPolicy = policy
    ? { type: 'sts', string: policy.text.split(/\r?\n/).filter((l) => l.trim() !== ''), mx_host: policy.mx }
    : { type: 'no-policy-found', string: [], mx_host: [] };
  tx.tlsReports.add(team, day, domain, info, sts.success, sts.failures);
}
