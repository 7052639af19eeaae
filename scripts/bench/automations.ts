#!/usr/bin/env bun
/**
 * Automation runs benchmark — `npm run bench:automations` (= `bun scripts/bench/automations.ts`).
 *
 *   npm run bench:automations                      defaults: 10,000 runs of each automation (~30 s)
 *   npm run bench:automations -- --runs 2000
 *
 * Posthorn's services run in this process (as the tests start them: createServices on a fresh
 * LMDB in a temp dir), with `example.test` verified for sending. Two automations, measured one
 * after the other, each started by its own custom event:
 *
 *   store   trigger → condition on the payload → contact update → add to segment   (4 steps)
 *   email   trigger → contact update → send_email (a template with a contact value) (3 steps)
 *
 * For each: `--runs` triggers are committed through the one event function (Events.trigger, 100
 * per unit of work, as concurrent POST /events/send requests batch) while the back office is
 * stopped; then it starts and the clock runs until every run has completed (intake of the
 * triggers, then every step, each durable; the emails are committed with their runs and queued
 * for delivery to a destination that does not answer). Prints runs/s and steps/s, and the RSS of
 * this process. Nothing leaves 127.0.0.1; the temp dir is removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ConnectionInput, StepInput } from '../../src/schemas/automations';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    runs: { type: 'string', default: '10000' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});

if (opts.help) {
  console.log('usage: bun scripts/bench/automations.ts [--runs 10000]');
  process.exit(0);
}

const RUNS = Number(opts.runs);
if (!Number.isInteger(RUNS) || RUNS < 1 || RUNS > 1_000_000) fail('--runs must be an integer 1-1000000');

const { loadConfig } = await import('../../src/config');
const { createServices, closeServices } = await import('../../src/services');
const { createTeam } = await import('../../src/accounts/bootstrap');
const { createTemplate, publishTemplate } = await import('../../src/templates');
const { createEvent } = await import('../../src/automations/custom-events');
const { createAutomation } = await import('../../src/automations');
const { setQuiet } = await import('../../src/log');
setQuiet(true);

const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-bench-automations-'));
process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
// DNS to the discard port: deliveries of the emails fail at once and wait for a retry.
const config = loadConfig({ env: {}, overrides: { data_dir: dataDir, 'dns.servers': ['127.0.0.1:9'] } });
const svc = await createServices(config);
const { team_id: team } = await createTeam(svc.store);
await verifyDomain('example.test');
const tpl = await createTemplate(svc.store, team, {
  name: 'welcome',
  html: '<p>Welcome, {{{NAME}}}</p>',
  subject: 'Hi {{{NAME}}}',
  from: 'Acme <hello@example.test>',
  variables: [{ key: 'NAME', type: 'string', fallback_value: null }],
});
await publishTemplate(svc.store, team, tpl.id);
const segment = newId();
await svc.store.write(async (tx) => tx.segments.put({ id: segment, team_id: team, created_at: new Date().toISOString(), name: 'bench' }));

const scenarios: { name: string; summary: string; steps: StepInput[]; connections: ConnectionInput[] }[] = [
  {
    name: 'store',
    summary: 'trigger → condition → contact update → add to segment',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'store' } },
      { key: 'check', type: 'condition', config: { type: 'rule', field: 'event.n', operator: 'gte', value: 0 } },
      { key: 'name', type: 'contact_update', config: { first_name: { var: 'event.name' } } },
      { key: 'join', type: 'add_to_segment', config: { segment_id: segment } },
    ],
    connections: [
      { from: 'start', to: 'check' },
      { from: 'check', to: 'name', type: 'condition_met' },
      { from: 'name', to: 'join' },
    ],
  },
  {
    name: 'email',
    summary: 'trigger → contact update → send_email',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'email' } },
      { key: 'name', type: 'contact_update', config: { first_name: { var: 'event.name' } } },
      { key: 'welcome', type: 'send_email', config: { template: { id: tpl.id, variables: { NAME: { var: 'contact.first_name' } } } } },
    ],
    connections: [
      { from: 'start', to: 'name' },
      { from: 'name', to: 'welcome' },
    ],
  },
];

const results: string[] = [];
const rssStart = process.memoryUsage().rss;
let rssPeak = rssStart;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 100);
for (const s of scenarios) {
  await createEvent(svc.store, team, { name: s.name, schema: { name: 'string', n: 'number' } });
  const auto = await createAutomation(svc.store, team, { name: s.name, status: 'enabled', steps: s.steps, connections: s.connections });

  // 1. Triggers, committed while the back office is stopped.
  const commits: Promise<unknown>[] = [];
  for (let i = 0; i < RUNS; i += 100) {
    const n = Math.min(100, RUNS - i);
    commits.push(
      svc.store.write(async (tx) => {
        for (let j = 0; j < n; j++)
          await svc.events.trigger(tx, team, { event: s.name, email: `${s.name}${i + j}@dest.test`, payload: { name: `User ${i + j}`, n: i + j } });
      }),
    );
  }
  await Promise.all(commits);

  // 2. Drain: intake, then every step of every run.
  const t0 = performance.now();
  await svc.backOffice.start();
  for (;;) {
    await svc.backOffice.idle('automations');
    if ((await svc.store.automationTriggers.next(1)).length === 0 && (await svc.store.automationDue.size()) === 0) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  await svc.backOffice.stop();

  let completed = 0;
  let steps = 0;
  for (const r of await svc.store.automationRuns.all(team))
    if (r.automation_id === auto.id) {
      if (r.status === 'completed') completed++;
      steps += r.steps.length;
    }
  if (completed !== RUNS) fail(`${s.name}: ${completed} of ${RUNS} runs completed`);
  results.push(`  ${s.name.padEnd(6)}      ${rate(RUNS, seconds)} runs/s, ${rate(steps, seconds)} steps/s (${s.summary}), ${seconds.toFixed(2)} s`);
}
clearInterval(sampler);
const emails = await svc.store.emails.count(team);
await closeServices(svc);
if (emails !== RUNS) fail(`${emails} emails committed, expected ${RUNS}`);

const cpu = cpus();
const args = process.argv.slice(2).join(' ');
console.log('Posthorn automation runs benchmark');
console.log(`  command     npx bun scripts/bench/automations.ts${args ? ` ${args}` : ''}   (npm run bench:automations${args ? ` -- ${args}` : ''})`);
console.log(`  machine     ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${mb(totalmem())} RAM, Bun ${Bun.version}`);
console.log(`  setup       ${RUNS.toLocaleString('en-US')} runs per automation, each started by a trigger committed beforehand (a new contact per run)`);
for (const line of results) console.log(line);
console.log(`  emails      ${emails.toLocaleString('en-US')} committed by the email runs, each in the unit of work that moved its run past the step`);
console.log(`  RSS         start ${mb(rssStart)}, peak ${mb(rssPeak)} (back office included)`);
process.exit(0);

/** A sending domain marked verified in the store (no DNS here). */
async function verifyDomain(name: string): Promise<void> {
  const { newDomain, domainSettings } = await import('../../src/domains/create');
  const d = await newDomain(team, newId(), domainSettings({ name }));
  await svc.store.write(async (tx) =>
    tx.domains.put({
      ...d,
      status: 'verified',
      record_status: { ...d.record_status, 'SPF:MX': 'verified', 'SPF:TXT': 'verified', DKIM: 'verified' },
      verification: { ...d.verification, checked_at: new Date().toISOString() },
    }),
  );
}

function newId(): string {
  return Bun.randomUUIDv7();
}

function rate(n: number, s: number): string {
  return Math.round(n / s).toLocaleString('en-US');
}

function mb(b: number): string {
  return `${(b / 2 ** 20).toFixed(0)} MB`;
}

function fail(message: string): never {
  console.error(`bench:automations: ${message}`);
  process.exit(1);
}
