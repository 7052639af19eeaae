// The PostgreSQL schema, as versioned, forward-only migrations. Every start (and `posthorn
// migrate`) applies those the database lacks, in one transaction under an advisory lock: two
// nodes starting together never migrate at once, and the second finds the work done. A database
// migrated by a newer Posthorn is refused rather than misread. A migration, once released, is
// never edited: a change is a new migration at the end of MIGRATIONS.
//
// Layout (src/store/pg/): each collection of records is a table (team, id) → `value` (the record as
// JSON text, key order kept) with a column per index (`i_<name>`) and `expires` (ms, retention).
// Those tables, and the bodies', are made from their declaration (../collections.ts: `since` names
// the migration that creates each); the work tables, counters and functions are written here.
import type { SQL } from 'bun';
import { COLLECTIONS, CONTENTS } from '../collections';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Keys compare byte by byte whatever the database's locale: ids sort as the LMDB backend sorts them. */
const KEY = 'text COLLATE "C"';

/** An index of a collection: unique ones are constraints (per team, or install-wide when global). */
interface IndexSpec {
  name: string;
  unique?: boolean;
  global?: boolean;
}

/** A collection's table: its indexes as columns, unique ones checked at COMMIT (deferred). */
function recordsTable(table: string, indexes: IndexSpec[] = []): string {
  const cols = indexes.map((i) => `, i_${i.name} ${KEY}`).join('');
  const out = [
    `CREATE TABLE ${table} (team ${KEY} NOT NULL, id ${KEY} NOT NULL, value json NOT NULL, expires bigint${cols}, PRIMARY KEY (team, id));`,
    `CREATE INDEX ${table}_expires ON ${table} (expires) WHERE expires IS NOT NULL;`,
  ];
  for (const i of indexes) {
    if (i.unique)
      out.push(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_${i.name}_unique UNIQUE (${i.global ? '' : 'team, '}i_${i.name}) DEFERRABLE INITIALLY DEFERRED;`);
    else out.push(`CREATE INDEX ${table}_${i.name} ON ${table} (team, i_${i.name}, id) WHERE i_${i.name} IS NOT NULL;`);
  }
  return out.join('\n');
}

/** Bodies kept apart from their records: text fields as JSON, the bytes apart (read in slices). */
function contentsTable(table: string): string {
  return [
    `CREATE TABLE ${table} (team ${KEY} NOT NULL, id ${KEY} NOT NULL, value json NOT NULL, raw bytea, files bytea, PRIMARY KEY (team, id));`,
    // Stored uncompressed out of line: one attachment is read with substring() without the rest.
    `ALTER TABLE ${table} ALTER COLUMN raw SET STORAGE EXTERNAL, ALTER COLUMN files SET STORAGE EXTERNAL;`,
  ].join('\n');
}

/**
 * The tables of the collections and bodies declared `since` schema version `version`
 * (../collections.ts), in the order declared: part of that version's migration. Every migration
 * has them, so that a collection declared for a new version gets its table there.
 */
export function declaredTables(version: number): string[] {
  return [
    ...Object.values(COLLECTIONS)
      .filter((c) => c.since === version)
      .map((c) => recordsTable(c.table, c.indexes)),
    ...Object.values(CONTENTS)
      .filter((c) => c.since === version)
      .map((c) => contentsTable(c.table)),
  ];
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'the store of Posthorn 0.2: collections, bodies, work tables, counters',
    sql: [
      // Fails a statement (and so its transaction) when a write did not touch the rows expected:
      // the row changed since it was read (40001, the unit of work runs again), or an idempotency
      // key was stored meanwhile (PH001, env.ts).
      `CREATE FUNCTION posthorn_expect(got bigint, want bigint, state text DEFAULT '40001') RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF got <> want THEN RAISE EXCEPTION 'posthorn: a row changed since it was read' USING ERRCODE = state; END IF;
END $$;`,
      // Counters of a metrics bucket, added key by key.
      `CREATE FUNCTION posthorn_add_counts(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_object_agg(k, coalesce((a->>k)::bigint, 0) + coalesce((b->>k)::bigint, 0)), '{}'::jsonb)
FROM (SELECT jsonb_object_keys(a) AS k UNION SELECT jsonb_object_keys(b)) keys
$$;`,
      ...declaredTables(1),
      // The delivery queue: due first, so "what is due" reads the head of one index.
      `CREATE TABLE queue (id ${KEY} PRIMARY KEY, team ${KEY} NOT NULL, email_id ${KEY} NOT NULL, domain ${KEY} NOT NULL, due bigint NOT NULL, entry json NOT NULL);
CREATE INDEX queue_due ON queue (due, domain, id);
CREATE INDEX queue_email ON queue (team, email_id);`,
      `CREATE TABLE webhook_outbox (team ${KEY} NOT NULL, webhook ${KEY} NOT NULL, due bigint NOT NULL, event_id ${KEY} NOT NULL, PRIMARY KEY (team, webhook, due, event_id));
CREATE INDEX webhook_outbox_due ON webhook_outbox (due);`,
      // Every due index (schedule, broadcast_schedule, import_queue, automation_due, automation_cleanup).
      `CREATE TABLE due_index (name ${KEY} NOT NULL, due bigint NOT NULL, team ${KEY} NOT NULL, id ${KEY} NOT NULL, PRIMARY KEY (name, due, team, id));`,
      `CREATE TABLE inbound_spool (id ${KEY} PRIMARY KEY, due bigint, expires bigint, value json NOT NULL, raw bytea NOT NULL);
ALTER TABLE inbound_spool ALTER COLUMN raw SET STORAGE EXTERNAL;
CREATE INDEX inbound_spool_due ON inbound_spool (due, id) WHERE due IS NOT NULL;
CREATE INDEX inbound_spool_expires ON inbound_spool (expires) WHERE expires IS NOT NULL;`,
      `CREATE TABLE automation_triggers (id ${KEY} PRIMARY KEY, value json NOT NULL);`,
      `CREATE TABLE broadcast_progress (team ${KEY} NOT NULL, broadcast ${KEY} NOT NULL, contact ${KEY} NOT NULL, email_id text, PRIMARY KEY (team, broadcast, contact));`,
      `CREATE TABLE memberships (team ${KEY} NOT NULL, segment ${KEY} NOT NULL, contact ${KEY} NOT NULL, at text NOT NULL, PRIMARY KEY (team, segment, contact));
CREATE INDEX memberships_contact ON memberships (team, contact, segment);`,
      `CREATE TABLE topic_choices (team ${KEY} NOT NULL, contact ${KEY} NOT NULL, topic ${KEY} NOT NULL, subscription text NOT NULL, PRIMARY KEY (team, contact, topic));
CREATE INDEX topic_choices_topic ON topic_choices (team, topic, contact);`,
      // One row per (team, endpoint, key): the primary key is what makes a key hold across nodes.
      `CREATE TABLE idempotency (team ${KEY} NOT NULL, endpoint ${KEY} NOT NULL, key ${KEY} NOT NULL, rec json NOT NULL, created_at bigint NOT NULL, expires bigint NOT NULL, PRIMARY KEY (team, endpoint, key));
CREATE INDEX idempotency_expires ON idempotency (expires);`,
      `CREATE TABLE metrics (team ${KEY} NOT NULL, hour bigint NOT NULL, domain_id ${KEY} NOT NULL, broadcast_id ${KEY} NOT NULL, counts jsonb NOT NULL, expires bigint NOT NULL, PRIMARY KEY (team, hour, domain_id, broadcast_id));
CREATE INDEX metrics_expires ON metrics (expires);
CREATE TABLE metrics_email (team ${KEY} NOT NULL, hour bigint NOT NULL, email_id ${KEY} NOT NULL, domain_id ${KEY} NOT NULL, broadcast_id text, counts jsonb NOT NULL, expires bigint NOT NULL, PRIMARY KEY (team, hour, email_id));
CREATE INDEX metrics_email_expires ON metrics_email (expires);
CREATE TABLE metrics_links (team ${KEY} NOT NULL, broadcast_id ${KEY} NOT NULL, url_hash ${KEY} NOT NULL, url text NOT NULL, clicks bigint NOT NULL, unique_clicks bigint NOT NULL, expires bigint NOT NULL, PRIMARY KEY (team, broadcast_id, url_hash));
CREATE INDEX metrics_links_expires ON metrics_links (expires);`,
      // Uploaded CSV files of contact imports, in slices of about 1 MB from byte `start`.
      `CREATE TABLE import_files (team ${KEY} NOT NULL, id ${KEY} NOT NULL, start bigint NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (team, id, start));`,
      `CREATE TABLE meta (name text PRIMARY KEY, value bytea NOT NULL);`,
      // The nodes of the cluster, each seen every few seconds (GET /health, the rate limit's share).
      `CREATE TABLE nodes (node text PRIMARY KEY, started_at timestamptz NOT NULL, seen_at timestamptz NOT NULL, version text NOT NULL);`,
    ].join('\n'),
  },
  {
    version: 2,
    name: 'operating delivery: held destinations, site shaping, MTA-STS policies, TLS-RPT days, sending counts',
    sql: [
      // A team's entries by destination (queue controls, GET /queue).
      `CREATE INDEX queue_destination ON queue (team, domain, id);`,
      `CREATE TABLE queue_holds (team ${KEY} NOT NULL, destination ${KEY} NOT NULL, value json NOT NULL, PRIMARY KEY (team, destination));`,
      `CREATE TABLE sites (site ${KEY} PRIMARY KEY, value json NOT NULL);`,
      `CREATE TABLE mta_sts (domain ${KEY} PRIMARY KEY, value json NOT NULL, expires bigint NOT NULL);
CREATE INDEX mta_sts_expires ON mta_sts (expires);`,
      // A team's TLS sessions per day (days since the epoch) and policy domain, newest day first.
      `CREATE TABLE tls_reports (team ${KEY} NOT NULL, day_n int NOT NULL, domain ${KEY} NOT NULL, value jsonb NOT NULL, expires bigint NOT NULL, PRIMARY KEY (team, day_n, domain));
CREATE INDEX tls_reports_expires ON tls_reports (expires);`,
      // One day's sessions added to its row under the row's lock: successes and failures summed,
      // failure kinds merged (at most p_max kinds; the rest count in \`failure\` only).
      `CREATE FUNCTION posthorn_tls_add(p_team text, p_day_n int, p_day text, p_domain text, p_policy jsonb, p_success bigint, p_failures jsonb, p_expires bigint, p_max int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  cur jsonb;
  kinds jsonb;
  f jsonb;
  i int;
  matched boolean;
  failed bigint;
BEGIN
  INSERT INTO tls_reports (team, day_n, domain, value, expires)
    VALUES (p_team, p_day_n, p_domain, jsonb_build_object('team_id', p_team, 'day', p_day, 'domain', p_domain, 'policy', p_policy, 'success', 0, 'failure', 0, 'failures', '[]'::jsonb), p_expires)
    ON CONFLICT DO NOTHING;
  SELECT value INTO cur FROM tls_reports WHERE team = p_team AND day_n = p_day_n AND domain = p_domain FOR UPDATE;
  kinds := cur->'failures';
  failed := (cur->>'failure')::bigint;
  FOR f IN SELECT value FROM jsonb_array_elements(p_failures) LOOP
    failed := failed + (f->>'count')::bigint;
    matched := false;
    FOR i IN 0 .. jsonb_array_length(kinds) - 1 LOOP
      IF kinds->i->'result_type' = f->'result_type' AND kinds->i->'receiving_mx_hostname' = f->'receiving_mx_hostname'
         AND kinds->i->'receiving_ip' = f->'receiving_ip' AND kinds->i->'failure_reason_code' = f->'failure_reason_code' THEN
        kinds := jsonb_set(kinds, ARRAY[i::text, 'count'], to_jsonb((kinds->i->>'count')::bigint + (f->>'count')::bigint));
        matched := true;
        EXIT;
      END IF;
    END LOOP;
    IF NOT matched AND jsonb_array_length(kinds) < p_max THEN kinds := kinds || jsonb_build_array(f); END IF;
  END LOOP;
  UPDATE tls_reports SET value = cur || jsonb_build_object('policy', p_policy, 'success', (cur->>'success')::bigint + p_success, 'failure', failed, 'failures', kinds)
    WHERE team = p_team AND day_n = p_day_n AND domain = p_domain;
END $$;`,
      // Emails accepted per team and clock hour ('h') or UTC day ('d').
      `CREATE TABLE send_counts (team ${KEY} NOT NULL, period ${KEY} NOT NULL, start bigint NOT NULL, n bigint NOT NULL, expires bigint NOT NULL, PRIMARY KEY (team, period, start));
CREATE INDEX send_counts_expires ON send_counts (expires);`,
      ...declaredTables(2),
    ].join('\n'),
  },
  {
    version: 3,
    name: 'deliverability: insights of sent emails',
    sql: declaredTables(3).join('\n'),
  },
  {
    version: 4,
    name: 'template version history',
    sql: declaredTables(4).join('\n'),
  },
  {
    version: 5,
    name: 'bounce classes: deliverability incidents, addresses whose mailbox was full',
    sql: declaredTables(5).join('\n'),
  },
  {
    version: 6,
    name: 'metric counters by mailbox provider (site)',
    // Buckets counted before have no site (''): they stay one row each under the wider key.
    sql: [
      `ALTER TABLE metrics ADD COLUMN site ${KEY} NOT NULL DEFAULT '';
ALTER TABLE metrics DROP CONSTRAINT metrics_pkey;
ALTER TABLE metrics ADD PRIMARY KEY (team, hour, domain_id, broadcast_id, site);
ALTER TABLE metrics_email ADD COLUMN site text;`,
      ...declaredTables(6),
    ].join('\n'),
  },
  {
    version: 7,
    name: 'accounts: the audit log',
    sql: declaredTables(7).join('\n'),
  },
  {
    version: 8,
    name: 'certificates by ACME: account, certificates, challenges',
    sql: declaredTables(8).join('\n'),
  },
  {
    version: 9,
    name: 'cluster: leases of a dead node taken over',
    // The work tables remember which node leased a row: a unit of work written with
    // `WriteOptions.lease` names its node in the transaction-local setting `posthorn.lease_node`,
    // and the trigger stamps every row that unit inserts or updates with it; any other write
    // clears it (the lease is over: settled, retried or removed). `nodes.released_at` marks a node
    // whose leases were handed back (index.ts, takeOver); its next heartbeat clears it.
    sql: `CREATE FUNCTION posthorn_lease_node() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.node := nullif(current_setting('posthorn.lease_node', true), '');
  RETURN NEW;
END $$;
${['queue', 'webhook_outbox', 'due_index', 'inbound_spool']
  .map(
    (t) => `ALTER TABLE ${t} ADD COLUMN node text;
CREATE TRIGGER ${t}_lease_node BEFORE INSERT OR UPDATE ON ${t} FOR EACH ROW EXECUTE FUNCTION posthorn_lease_node();`,
  )
  .join('\n')}
ALTER TABLE nodes ADD COLUMN released_at timestamptz;`,
  },
  {
    version: 10,
    name: 'deliverability: blocklist listings',
    sql: declaredTables(10).join('\n'),
  },
  {
    version: 11,
    name: 'sending IPs: warm-up schedules and state; regions of queue entries and nodes',
    sql: [
      `ALTER TABLE queue ADD COLUMN region ${KEY};
ALTER TABLE nodes ADD COLUMN region ${KEY};`,
      ...declaredTables(11),
    ].join('\n'),
  },
  {
    version: 12,
    name: 'deliverability reports: DMARC aggregate reports received, TLS-RPT reports sent',
    sql: declaredTables(12).join('\n'),
  },
  {
    version: 13,
    name: 'accounts: single-use links mailed to users (password resets, email changes)',
    sql: declaredTables(13).join('\n'),
  },
  {
    version: 14,
    name: 'inboxes: inboxes, their labels, threads, messages and drafts',
    sql: declaredTables(14).join('\n'),
  },
  {
    version: 15,
    name: 'metric counters by sending IP',
    // Buckets counted before have no sending IP (''): they stay one row each under the wider key.
    sql: [
      `ALTER TABLE metrics ADD COLUMN ip ${KEY} NOT NULL DEFAULT '';
ALTER TABLE metrics DROP CONSTRAINT metrics_pkey;
ALTER TABLE metrics ADD PRIMARY KEY (team, hour, domain_id, broadcast_id, site, ip);
ALTER TABLE metrics_email ADD COLUMN ip text;`,
      ...declaredTables(15),
    ].join('\n'),
  },
  {
    version: 16,
    name: "inboxes: the Inbox Agent's runs; full-text search of inbox messages",
    sql: [
      ...declaredTables(16),
      // A tsvector per inbox message (pg/inbox-text.ts), written by a trigger in the message's own
      // statement: subject (A), participants (B), the body's text — the HTML's when there is none:
      // the parser skips its tags — (D, the first 20,000 characters).
      `CREATE TABLE inbox_text (team ${KEY} NOT NULL, id ${KEY} NOT NULL, inbox_id ${KEY} NOT NULL, thread_id ${KEY} NOT NULL, doc tsvector NOT NULL, PRIMARY KEY (team, id));
CREATE INDEX inbox_text_doc ON inbox_text USING gin (doc);
CREATE FUNCTION posthorn_inbox_text() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM inbox_text WHERE team = OLD.team AND id = OLD.id;
    RETURN OLD;
  END IF;
  INSERT INTO inbox_text (team, id, inbox_id, thread_id, doc)
  VALUES (NEW.team, NEW.id, NEW.value->>'inbox_id', NEW.value->>'thread_id',
    setweight(to_tsvector('simple', coalesce(NEW.value->>'subject', '')), 'A') ||
    setweight(to_tsvector('simple', concat_ws(' ', NEW.value->>'from', NEW.value->>'to', NEW.value->>'cc', NEW.value->>'bcc')), 'B') ||
    setweight(to_tsvector('simple', left(coalesce(NEW.value->>'text', NEW.value->>'html', ''), 20000)), 'D'))
  ON CONFLICT (team, id) DO UPDATE SET inbox_id = EXCLUDED.inbox_id, thread_id = EXCLUDED.thread_id, doc = EXCLUDED.doc;
  RETURN NEW;
END $$;
CREATE TRIGGER inbox_messages_text AFTER INSERT OR UPDATE OR DELETE ON inbox_messages FOR EACH ROW EXECUTE FUNCTION posthorn_inbox_text();`,
    ].join('\n'),
  },
  {
    version: 17,
    name: 'metric counters sharded per connection (concurrent transactions add to different rows), added in PL/pgSQL',
    // A team's hour bucket is added to by every outcome of that hour: one row, it was locked from
    // each transaction's upsert to its flushed COMMIT, so the delivery engine's groups in flight
    // waited for each other's flush. Each connection adds to its own shard (pg_backend_pid() % 16,
    // pg/metrics.ts); reads sum the shards. Buckets counted before are shard 0.
    sql: [
      `ALTER TABLE metrics ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE metrics DROP CONSTRAINT metrics_pkey;
ALTER TABLE metrics ADD PRIMARY KEY (team, hour, domain_id, broadcast_id, site, ip, shard);`,
      // The same sum in PL/pgSQL, which keeps its plan for the session: the SQL function (version 1)
      // was planned again by every statement that called it, about half of each counter upsert.
      `CREATE OR REPLACE FUNCTION posthorn_add_counts(a jsonb, b jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  k text;
  v text;
  total jsonb := a;
BEGIN
  FOR k, v IN SELECT * FROM jsonb_each_text(b) LOOP
    total := jsonb_set(total, ARRAY[k], to_jsonb(coalesce((total->>k)::bigint, 0) + v::bigint));
  END LOOP;
  RETURN total;
END $$;`,
      ...declaredTables(17),
    ].join('\n'),
  },
  {
    version: 18,
    name: 'room on the pages of emails and per-email counters for their updates (HOT)',
    // An email's row is written again by each of its events (sent, delivered, …) and its per-email
    // bucket by each count after the first; none of them changes an indexed column, so with room on
    // its page the new version goes there and no index gets a new entry (a heap-only tuple) —
    // full pages made every update insert into the primary key and the expiry index as well.
    // Pages written from now on keep the room; earlier ones as they are.
    sql: [
      `ALTER TABLE emails SET (fillfactor = 75);
ALTER TABLE metrics_email SET (fillfactor = 75);`,
      ...declaredTables(18),
    ].join('\n'),
  },
  {
    version: 19,
    name: 'the incoming queue: batches accepted as received, one row per request, until written as their emails',
    // (sending/incoming.ts) `take` deletes a row in the unit of work that writes its emails: a
    // concurrent take waits for that unit, then finds nothing.
    sql: [
      `CREATE TABLE incoming (team ${KEY} NOT NULL, id ${KEY} NOT NULL, value json NOT NULL, PRIMARY KEY (team, id));
CREATE INDEX incoming_id ON incoming (id);`,
      ...declaredTables(19),
    ].join('\n'),
  },
];

/** The advisory lock migrations run under ('posthorn' in ASCII). */
const MIGRATE_LOCK = '8101238451258896494';

/** The schema version this Posthorn knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export class SchemaTooNew extends Error {}

/**
 * Apply the migrations the database lacks, in one transaction under an advisory lock. Resolves
 * with the version found and the version now.
 */
export async function migrate(sql: SQL): Promise<{ from: number; to: number }> {
  const conn = await sql.reserve();
  try {
    await conn.unsafe('BEGIN');
    try {
      await conn.unsafe('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATE_LOCK]);
      await conn.unsafe(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const [row] = (await conn.unsafe('SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations')) as { v: number }[];
      const from = Number(row!.v);
      if (from > SCHEMA_VERSION)
        throw new SchemaTooNew(`the database schema is at version ${from}, newer than this Posthorn knows (${SCHEMA_VERSION}): run the newer Posthorn`);
      for (const m of MIGRATIONS) {
        if (m.version <= from) continue;
        await conn.unsafe(m.sql).simple();
        await conn.unsafe('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      }
      await conn.unsafe('COMMIT');
      return { from, to: Math.max(from, SCHEMA_VERSION) };
    } catch (e) {
      await conn.unsafe('ROLLBACK').catch(() => {});
      throw e;
    }
  } finally {
    conn.release();
  }
}
