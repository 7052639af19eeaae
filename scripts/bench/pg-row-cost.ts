/**
 * What a statement costs beside its row on PostgreSQL (issue 38, cluster mode): `--rows` rows an
 * email record's size written in one transaction, either as that many `INSERT … ON CONFLICT`
 * statements issued at once (Bun.sql pipelines them: the shape of a unit of work's writes today,
 * store/pg/env.ts) or as one multi-row statement of the same rows (`json_to_recordset`, the shape
 * of the request log's and the per-email counters' writes). CPU per row of this process (the
 * driver) and of every postgres process, alternating rounds, on a private server
 * (test/helpers/postgres.ts, fsync on). Nothing leaves 127.0.0.1.
 *
 *   bun scripts/bench/pg-row-cost.ts [--rows 20] [--transactions 300] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { SQL } from 'bun';
import { startPgServer } from '../../test/helpers/postgres';
import { fmt, postgresCpu } from './lib';

const { values: opts } = parseArgs({
  options: { rows: { type: 'string', default: '20' }, transactions: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' } },
});
const ROWS = Number(opts.rows);
const TRANSACTIONS = Number(opts.transactions);
const ROUNDS = Number(opts.rounds);

const pg = await startPgServer();
const db = new SQL({ url: await pg.database('rowcost'), max: 1 });
await db.unsafe('CREATE TABLE t (team text, id text, value json, expires bigint, PRIMARY KEY (team, id))');

// About an email record's JSON.
const value = JSON.stringify({
  id: '0195608a-51e4-70ed-a079-d3bde8e25d01',
  from: 'Acme <hello@acme.test>',
  to: ['ann@dest.test'],
  subject: 'Your receipt',
  last_event: 'queued',
  created_at: new Date().toISOString(),
  tags: [{ name: 'kind', value: 'receipt' }],
});
let seq = 0;

const shapes = {
  async statements() {
    await db.begin(async (tx) => {
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < ROWS; i++)
        writes.push(
          tx.unsafe(
            'INSERT INTO t (team, id, value, expires) VALUES ($1, $2, $3::text::json, $4) ON CONFLICT (team, id) DO UPDATE SET value = excluded.value',
            ['team', String(++seq), value, 1],
          ),
        );
      await Promise.all(writes);
    });
  },
  async oneStatement() {
    await db.begin(async (tx) => {
      // The record's text made once and spliced in, as the statement form passes it: neither form pays for encoding the record.
      const rows = Array.from({ length: ROWS }, () => `{"team":"team","id":"${++seq}","value":${value},"expires":1}`);
      await tx.unsafe(
        `INSERT INTO t (team, id, value, expires) SELECT team, id, value, expires FROM json_to_recordset($1::text::json)
         AS r(team text, id text, value json, expires bigint) ON CONFLICT (team, id) DO UPDATE SET value = excluded.value`,
        [`[${rows.join(',')}]`],
      );
    });
  },
};

console.log(`${ROWS} rows a transaction, ${TRANSACTIONS} transactions a round; µs of CPU per row`);
for (let round = 1; round <= ROUNDS; round++)
  for (const [name, run] of Object.entries(shapes)) {
    const self = process.cpuUsage();
    const pg0 = postgresCpu().total;
    const t0 = performance.now();
    for (let i = 0; i < TRANSACTIONS; i++) await run();
    const rows = ROWS * TRANSACTIONS;
    const used = process.cpuUsage(self);
    console.log(
      `round ${round}  ${name.padEnd(12)}  this process ${fmt((used.user + used.system) / rows, 1).padStart(6)}  postgres ${fmt(((postgresCpu().total - pg0) / rows) * 1e6, 1).padStart(6)}  wall ${fmt(((performance.now() - t0) / rows) * 1000, 1).padStart(6)}`,
    );
  }
await db.close();
pg.destroy();
process.exit(0);
