#!/usr/bin/env bun
/**
 * Insights benchmark — `bun scripts/bench/insights.ts [--emails 200]`.
 *
 * What the deliverability insights cost (README "Deliverability", "Insights"), to decide where they
 * are computed: on the accept path, on the delivery path, or when asked for.
 *   evaluate   CPU time of the HTTP thread per email to make an email's insights without rspamd —
 *              compose, DKIM-sign (RSA-2048 in this thread), read the HTML, look up DMARC (cached
 *              after the first) — over --emails stored emails, one after another: what accepting
 *              each email would cost on top of its own 80–90 µs if they were made there.
 *   GET        GET /emails/{id}/insights, median answer time: the first time (computed, without
 *              rspamd and with a private rspamd on loopback, test/helpers/rspamd.ts), then again
 *              (kept).
 * Everything runs in this process against a DNS server in it (example.test verified, its DKIM key
 * and a DMARC record published); nothing leaves 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { startMailWorld, type MailWorld } from '../../test/helpers/world';
import { startRspamd } from '../../test/helpers/rspamd';
import { freePort } from '../../test/helpers/posthorn';
import { Insights } from '../../src/insights';
import { Resolver } from '../../src/dns/resolver';
import { fmt, machine } from './lib';

const { values: opts } = parseArgs({ args: process.argv.slice(2), options: { emails: { type: 'string', default: '200' } }, strict: true });
const N = Number(opts.emails);

/** A newsletter-sized message: a few KB of html with links and images, a text part derived. */
const HTML = `<h1>Hello {name}</h1>${'<p>Here is what is new this month at Acme: more storage, faster sync, and a new <a href="https://www.example.test/blog/post">blog post</a> about it.</p><img src="https://www.example.test/img/hero.png" alt="Our new storage">'.repeat(12)}<p><a href="https://www.example.test/account">Your account</a></p>`;

async function sendSome(w: MailWorld, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await w.p.api('POST', '/emails', {
      body: { from: 'Acme <news@example.test>', to: [`user${i}@hold.test`], subject: `News ${i}`, html: HTML.replace('{name}', `user ${i}`) },
    });
    if (r.status !== 200) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
    ids.push(r.body.id);
  }
  return ids;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function timeGets(w: MailWorld, ids: string[]): Promise<{ first: number; kept: number }> {
  const first: number[] = [];
  const kept: number[] = [];
  for (const id of ids) {
    let t = performance.now();
    const r = await w.p.api('GET', `/emails/${id}/insights`);
    first.push(performance.now() - t);
    if (r.status !== 200) throw new Error(`insights: ${r.status}`);
    t = performance.now();
    await w.p.api('GET', `/emails/${id}/insights`);
    kept.push(performance.now() - t);
  }
  return { first: median(first), kept: median(kept) };
}

async function world(overrides: Record<string, unknown>): Promise<MailWorld> {
  const w = await startMailWorld(overrides);
  w.dns.zone.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=quarantine; rua=mailto:dmarc@example.test']);
  // The destination is held: delivery stays out of the measurement.
  await w.p.api('POST', '/queue/hold.test/hold');
  return w;
}

console.log(`Insights benchmark — ${machine()}; ${N} emails`);

// Without rspamd: the CPU of making insights, and GET's answer times.
const plain = await world({});
const ids = await sendSome(plain, N);
const insights = new Insights({ store: plain.p.svc.store, config: plain.p.svc.config, dns: new Resolver([plain.dns.address]).withCache(), spam: null });
const team = plain.p.creds.team_id;
const subjects = await Promise.all(
  ids.map(async (id) => {
    const email = (await plain.p.svc.store.emails.get(team, id))!;
    return {
      email,
      content: (await plain.p.svc.store.emailContent.get(team, id))!,
      domain: (await plain.p.svc.store.domains.get(team, email.domain_id)) ?? null,
    };
  }),
);
for (const s of subjects.slice(0, 20)) await insights.evaluate(s); // warm-up: JIT, DNS cache
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (const s of subjects) await insights.evaluate(s);
const wall = (performance.now() - t0) / subjects.length;
const cpu = process.cpuUsage(cpu0);
const cpuPerEmail = (cpu.user + cpu.system) / subjects.length;
const plainGets = await timeGets(plain, ids.slice(0, Math.min(N, 100)));
await plain.stop();

// With rspamd.
const port = await freePort();
const scored = await world({ 'spam.rspamd_url': `http://127.0.0.1:${port}` });
const rspamd = await startRspamd({ dns: scored.dns.address, port });
const ids2 = await sendSome(scored, Math.min(N, 100));
await scored.p.api('GET', `/emails/${ids2[0]}/insights`); // warm-up
const scoredGets = await timeGets(scored, ids2.slice(1));
await rspamd.stop();
await scored.stop();

console.log(`evaluate (no rspamd), per email:  ${fmt(cpuPerEmail)} µs CPU (this process, all threads), ${fmt(wall * 1000)} µs wall`);
console.log(`GET /emails/{id}/insights, first: ${fmt(plainGets.first, 2)} ms without rspamd, ${fmt(scoredGets.first, 2)} ms with rspamd`);
console.log(`GET /emails/{id}/insights, kept:  ${fmt(plainGets.kept, 2)} ms without rspamd, ${fmt(scoredGets.kept, 2)} ms with rspamd`);
process.exit(0);
