// Walking a database whose keys start with the team, team by team (the retention sweeps).
import type { Database, Key } from './env';

/** Records deleted per sweep transaction. */
export const SWEEP_BATCH = 1000;

/**
 * Each team with keys in `db` (keys `[team, …]`), in order: one positioned read per team however
 * many keys it holds. Lazy, so the caller may delete the team's keys before asking for the next.
 */
export function* teamsIn(db: Database): Generator<string> {
  let from: Key = [''];
  for (;;) {
    let team: string | null = null;
    for (const key of db.getKeys({ start: from, limit: 1 })) team = String((key as Key[])[0]);
    if (team === null) return;
    yield team;
    // After every key of the team: ids and hours (numbers sort before strings) alike.
    from = [team, '\uffff'];
  }
}
