// Queue controls (docs/api.md §19.6, §19.7, §7.6): what a team's delivery queue holds, by
// destination domain, and the operator's levers on it — hold, release, retry now, cancel — for all
// of a team's mail to one destination or for one email. Every change is a unit of work of its own
// (large destinations in chunks); state changes of emails (cancel) go through the one event
// function. The delivery engine sees them at its next claim: held entries are out of the due range,
// retried ones are due now, a retried destination's site is no longer suspended.
import type { QueueDestination } from '../schemas/operations';
import type { Config } from '../config';
import type { Events } from '../events';
import type { EmailRec, QueueCursor, QueueEntry, QueuedEntry, Store, Tx } from '../store';
import { errors } from '../errors';
import { nowIso, uuidTime } from '../ids';
import { cancel as cancelScheduled } from '../sending/scheduled';
import { SiteRules } from './shaping';

export interface ControlDeps {
  store: Store;
  events: Events;
  config: Pick<Config, 'delivery'>;
}

/** One destination of GET /queue (docs/api.md §19.6). */
/** A destination of the team's queue as GET /queue lists it (src/schemas/operations.ts). */
export type DestinationRow = QueueDestination;

/** Queue entries read per GET /queue at most: memory stays bounded on a huge queue. */
export const QUEUE_SCAN = 50_000;
/** Entries changed per unit of work: a large destination is worked through in several commits. */
const CHUNK = 500;

/** A destination path segment: a domain name (lowercase), as queue entries name it. */
export function destinationParam(raw: string | undefined | null): string {
  const d = (raw ?? '').trim().toLowerCase().replace(/\.$/, '');
  const domain = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
  if (d.length > 253 || !(domain.test(d) || /^\[[0-9a-f.:]+\]$/.test(d)) || !d.includes('.'))
    throw errors.invalidParameter('The `destination` must be a domain name, such as `gmail.com`.');
  return d;
}

export class QueueControls {
  private readonly rules: SiteRules;

  constructor(private readonly deps: ControlDeps) {
    this.rules = new SiteRules(deps.config.delivery.shaping);
  }

  /** The site a destination belongs to: as its last attempt found it by MX, else by name. */
  private siteOf(destination: string, entries: QueueEntry[]): string {
    if (!this.deps.config.delivery.shaping.enabled || this.deps.config.delivery.mode !== 'direct') return destination;
    return entries.find((e) => e.site)?.site ?? this.rules.siteOfDomain(destination) ?? destination;
  }

  /** GET /queue: the team's destinations, most queued first, held ones with nothing queued included. */
  async destinations(team: string): Promise<{ data: DestinationRow[]; truncated: boolean }> {
    const { store } = this.deps;
    const all = await store.queue.ofTeam(team, { limit: QUEUE_SCAN });
    const by = new Map<string, QueuedEntry[]>();
    for (const q of all) by.set(q.entry.domain, [...(by.get(q.entry.domain) ?? []), q]);
    const holds = new Set((await store.queueHolds.list(team)).map((h) => h.destination));
    for (const d of holds) if (!by.has(d)) by.set(d, []);
    const sites = new Map((await store.sites.all()).map((s) => [s.site, s]));
    const now = Date.now();
    const data = [...by].map(([destination, entries]) => this.row(destination, entries, holds.has(destination), sites, now));
    data.sort((a, b) => b.queued - a.queued || a.destination.localeCompare(b.destination));
    return { data, truncated: all.length >= QUEUE_SCAN };
  }

  /** One destination's row, as it is now. */
  async destination(team: string, destination: string): Promise<DestinationRow> {
    const { store } = this.deps;
    const entries = await store.queue.ofTeam(team, { limit: QUEUE_SCAN, destination });
    const sites = new Map((await store.sites.all()).map((s) => [s.site, s]));
    return this.row(destination, entries, await store.queueHolds.has(team, destination), sites, Date.now());
  }

  private row(destination: string, entries: QueuedEntry[], held: boolean, sites: Map<string, { suspended_until: number | null }>, now: number): DestinationRow {
    const site = this.siteOf(
      destination,
      entries.map((q) => q.entry),
    );
    let oldest = Infinity;
    let next = Infinity;
    const r: DestinationRow = {
      object: 'queue_destination',
      destination,
      site,
      queued: entries.length,
      recipients: 0,
      retrying: 0,
      held,
      held_emails: 0,
      oldest_queued_at: null,
      next_attempt_at: null,
      last_error: null,
      suspended_until: null,
    };
    for (const { due, entry } of entries) {
      r.recipients += entry.recipients.length;
      // Entry ids are UUIDv7: they carry the time the entry was queued.
      oldest = Math.min(oldest, uuidTime(entry.id));
      if (due === null) r.held_emails++;
      else next = Math.min(next, due);
      if (entry.attempts > 0) r.retrying++;
      if (entry.last_error) r.last_error = entry.last_error;
    }
    const until = sites.get(site)?.suspended_until;
    if (until && until > now) {
      r.suspended_until = new Date(until).toISOString();
      next = Math.max(next, until);
    }
    if (oldest !== Infinity) r.oldest_queued_at = new Date(oldest).toISOString();
    if (next !== Infinity) r.next_attempt_at = new Date(Math.max(next, now)).toISOString();
    return r;
  }

  /**
   * Work through a team's entries to `destination` in units of work of CHUNK entries: `each` is
   * called for every entry in a unit of work. Returns how many entries `each` changed.
   */
  private async chunked(
    team: string,
    destination: string,
    each: (tx: Tx, q: QueuedEntry) => Promise<boolean> | boolean,
    first?: (tx: Tx) => Promise<void>,
  ): Promise<number> {
    let after: QueueCursor | undefined;
    let changed = 0;
    for (let started = false; ; started = true) {
      const done = await this.deps.store.write(async (tx) => {
        if (!started) await first?.(tx);
        tx.changed({ team, topic: 'queue', id: destination });
        const page = await tx.queue.ofTeam(team, { limit: CHUNK, destination, after });
        for (const q of page) if (await each(tx, q)) changed++;
        after = page.at(-1)?.entry;
        return page.length < CHUNK;
      });
      if (done) return changed;
    }
  }

  /** POST /queue/{destination}/hold: nothing of the team's mail there is tried until released (new mail included). */
  async holdDestination(team: string, destination: string): Promise<number> {
    if (await this.deps.store.queueHolds.has(team, destination)) throw errors.validation(`The destination \`${destination}\` is already held.`);
    return this.chunked(
      team,
      destination,
      (tx, { entry }) => {
        if (entry.held) return false;
        tx.queue.put({ ...entry, held: 'destination' }, 0);
        return true;
      },
      async (tx) => tx.queueHolds.hold({ team_id: team, destination, held_at: nowIso() }),
    );
  }

  /** POST /queue/{destination}/release: the destination's held mail is due now (emails held one by one stay held). */
  async releaseDestination(team: string, destination: string): Promise<number> {
    if (!(await this.deps.store.queueHolds.has(team, destination))) throw errors.validation(`The destination \`${destination}\` is not held.`);
    const now = Date.now();
    return this.chunked(
      team,
      destination,
      (tx, { entry }) => {
        if (entry.held !== 'destination') return false;
        tx.queue.put({ ...entry, held: null }, now);
        return true;
      },
      async (tx) => tx.queueHolds.release(team, destination),
    );
  }

  /**
   * POST /queue/{destination}/retry: the destination's mail is due now, and its site's suspension
   * (a throttling reply's backoff) ends — its strikes still slow it while they fade.
   */
  async retryDestination(team: string, destination: string): Promise<number> {
    const { store } = this.deps;
    if (await store.queueHolds.has(team, destination)) throw errors.validation(`The destination \`${destination}\` is held: release it first.`);
    const entries = await store.queue.ofTeam(team, { limit: 1, destination });
    if (!entries.length) throw errors.notFound('Queued mail to this destination');
    const site = this.siteOf(
      destination,
      entries.map((q) => q.entry),
    );
    const now = Date.now();
    return this.chunked(
      team,
      destination,
      (tx, { entry }) => {
        if (entry.held) return false;
        tx.queue.put(entry, now);
        return true;
      },
      async (tx) => {
        const st = await tx.sites.get(site);
        if (st?.suspended_until) tx.sites.put({ ...st, suspended_until: null });
      },
    );
  }

  /** POST /queue/{destination}/cancel: every queued recipient of the team there ends `canceled` (held mail too). */
  async cancelDestination(team: string, destination: string): Promise<number> {
    const { store, events } = this.deps;
    if (!(await store.queue.ofTeam(team, { limit: 1, destination })).length) throw errors.notFound('Queued mail to this destination');
    // Removing entries moves the cursor's ground: read from the start each time.
    let canceled = 0;
    for (;;) {
      const n = await store.write(async (tx) => {
        const page = await tx.queue.ofTeam(team, { limit: CHUNK, destination });
        for (const { entry } of page) await this.cancelEntries(tx, team, entry.email_id, [entry], events);
        return page.length;
      });
      canceled += n;
      if (n < CHUNK) return canceled;
    }
  }

  /**
   * The queued entries of these emails leave the queue, their recipients `canceled`, as
   * POST /emails/{id}/cancel does — a broadcast stopped while being sent (docs/api.md §13.3):
   * CHUNK emails a unit of work. Resolves to the ids of the emails that were canceled so.
   */
  async cancelQueued(team: string, ids: string[]): Promise<Set<string>> {
    const { store, events } = this.deps;
    const canceled = new Set<string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const done = await store.write(async (tx) => {
        const out: string[] = [];
        for (const id of ids.slice(i, i + CHUNK)) {
          const entries = await tx.queue.entriesOf(team, id);
          if (!entries.length) continue;
          await this.cancelEntries(tx, team, id, entries, events);
          out.push(id);
        }
        return out;
      });
      for (const id of done) canceled.add(id);
    }
    return canceled;
  }

  /** Entries of one email leave the queue; their recipients end `canceled` (docs/api.md §7.6). */
  private async cancelEntries(tx: Tx, team: string, emailId: string, entries: QueueEntry[], events: Events): Promise<void> {
    for (const e of entries) tx.queue.remove(e);
    const email = await tx.emails.get(team, emailId);
    if (!email) return;
    await events.email(tx, email, 'canceled', { recipients: entries.flatMap((e) => e.recipients) });
  }

  /** The email and its live queue entries, in a unit of work (404 for an unknown email). */
  private async queued(tx: Tx, team: string, id: string): Promise<{ email: EmailRec; entries: QueueEntry[] }> {
    const email = await tx.emails.get(team, id);
    if (!email) throw errors.notFound('Email');
    return { email, entries: await tx.queue.entriesOf(team, id) };
  }

  /** POST /emails/{id}/hold. */
  async holdEmail(team: string, id: string): Promise<void> {
    await this.deps.store.write(async (tx) => {
      const { entries } = await this.queued(tx, team, id);
      if (!entries.length) throw errors.validation('Only queued emails can be held.');
      if (entries.every((e) => e.held === 'email')) throw errors.validation('The email is already held.');
      for (const e of entries) if (e.held !== 'email') tx.queue.put({ ...e, held: 'email' }, 0);
    });
  }

  /** POST /emails/{id}/release: due now — or held with its destination, when the team holds that. */
  async releaseEmail(team: string, id: string): Promise<void> {
    await this.deps.store.write(async (tx) => {
      const { entries } = await this.queued(tx, team, id);
      const held = entries.filter((e) => e.held === 'email');
      if (!held.length) throw errors.validation('The email is not held.');
      const now = Date.now();
      for (const e of held) tx.queue.put({ ...e, held: (await tx.queueHolds.has(team, e.domain)) ? 'destination' : null }, now);
    });
  }

  /** POST /emails/{id}/retry: due now (a suspended site still waits for its end). */
  async retryEmail(team: string, id: string): Promise<void> {
    await this.deps.store.write(async (tx) => {
      const { entries } = await this.queued(tx, team, id);
      if (!entries.length) throw errors.validation('Only queued emails can be retried.');
      if (entries.some((e) => e.held)) throw errors.validation('The email is held: release it first.');
      const now = Date.now();
      for (const e of entries) tx.queue.put(e, now);
    });
  }

  /**
   * POST /emails/{id}/cancel: a scheduled email is taken off the schedule (docs/api.md §7.6); a
   * queued one leaves the queue, its waiting recipients `canceled`. An attempt already under way
   * may still deliver: its outcome is recorded, nothing is tried again.
   */
  async cancelEmail(team: string, id: string): Promise<void> {
    const { store, events } = this.deps;
    const email = await store.emails.get(team, id);
    if (email?.last_event === 'scheduled') return cancelScheduled(this.deps, team, id);
    await store.write(async (tx) => {
      const { entries } = await this.queued(tx, team, id);
      if (!entries.length) throw errors.validation('Only scheduled or queued emails can be canceled.');
      await this.cancelEntries(tx, team, id, entries, events);
    });
  }
}
