// The changes a unit of work notes for the dashboard's live stream (interface.ts `Tx.changed`),
// kept small whatever the unit does: a broadcast batch or an import chunk changes hundreds of
// records, and what a page needs then is "reload the list", not every id. The same few changes are
// what PostgreSQL's NOTIFY carries to other nodes (pg/signals.ts), whose payload is limited to
// 8,000 bytes.
import type { Change, ChangeTopic } from './collections';
import { CHANGE_TOPICS } from './collections';

/** Ids kept per team and topic in one unit of work; past it, one change without an id stands for them all. */
export const IDS_PER_TOPIC = 20;

export class UnitChanges {
  /** `team topic` → the ids changed, or null once there were too many to name. */
  private readonly byTopic = new Map<string, Set<string> | null>();

  add(c: Change): void {
    const key = `${c.team} ${c.topic}`;
    const ids = this.byTopic.get(key);
    if (ids === null) return;
    if (c.id === null) {
      this.byTopic.set(key, null);
      return;
    }
    const set = ids ?? new Set<string>();
    set.add(c.id);
    this.byTopic.set(key, set.size > IDS_PER_TOPIC ? null : set);
  }

  get size(): number {
    return this.byTopic.size;
  }

  list(): Change[] {
    const out: Change[] = [];
    for (const [key, ids] of this.byTopic) {
      const [team, topic] = key.split(' ') as [string, ChangeTopic];
      if (ids === null) out.push({ team, topic, id: null });
      else for (const id of ids) out.push({ team, topic, id });
    }
    return out;
  }
}

/** Changes as one NOTIFY field: `team:topic:id` (id empty for "several"), comma-separated; at most `max` characters. */
export function encodeChanges(changes: readonly Change[], max = 6_000): string {
  const full = changes.map((c) => `${c.team}:${c.topic}:${c.id ?? ''}`).join(',');
  if (full.length <= max) return full;
  // Too long: one change without an id per team and topic.
  return [...new Set(changes.map((c) => `${c.team}:${c.topic}:`))].join(',').slice(0, max);
}

export function decodeChanges(field: string): Change[] {
  const out: Change[] = [];
  for (const part of field.split(',')) {
    const [team, topic, id] = part.split(':');
    if (!team || !CHANGE_TOPICS.includes(topic as ChangeTopic)) continue;
    out.push({ team, topic: topic as ChangeTopic, id: id || null });
  }
  return out;
}

/** `repo` whose `put(rec)` and `remove(team, id)` also note a change of `topic` (collections' `changes`). */
export function announcing<R extends object>(repo: R, topic: ChangeTopic, note: (c: Change) => void): R {
  const wrapped = Object.create(repo) as Record<string, unknown>;
  const r = repo as unknown as { put(rec: { team_id: string; id: string }): void; remove(team: string, id: string): void };
  wrapped.put = (rec: { team_id: string; id: string }) => {
    r.put(rec);
    note({ team: rec.team_id, topic, id: rec.id });
  };
  wrapped.remove = (team: string, id: string) => {
    r.remove(team, id);
    note({ team, topic, id });
  };
  return wrapped as R;
}
