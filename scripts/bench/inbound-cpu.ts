#!/usr/bin/env bun
/**
 * CPU per inbound message, after the 250 — `bun scripts/bench/inbound-cpu.ts [--count 4000] [--negative-ttl 0]`
 *
 * What the back office spends on a message the SMTP listener spooled (src/inbound/): `--count`
 * messages like smtp-source's (`-l 2048`, from sender@source.test to inbox@recv.test, a receiving
 * domain) are committed to the spool of a fresh LMDB by the listener's own spoolInbound, then the
 * back office runs in this process until the spool is empty. The sender's domain has no records,
 * as in bench:compare: SPF and DMARC get negative answers from a DNS server on loopback, cached
 * for `--negative-ttl` seconds (default 0, never cached; bench:compare's zone: 300). Reported:
 * messages per second of wall time and µs of this process's CPU per message (every thread, LMDB's
 * writer and the DNS server included). Run with `bun --cpu-prof-md scripts/bench/inbound-cpu.ts`
 * for a profile of exactly this path, which `--cpu-prof` cannot see on the back office's own
 * thread: the spool is filled by a child process (this script with `--spool-into DIR`), so the
 * profile holds only the processing.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { createServices, closeServices } from '../../src/services';
import { createHandler } from '../../src/api/server';
import { createTeam } from '../../src/accounts/bootstrap';
import { createBackOffice } from '../../src/backoffice/parts';
import { spoolInbound } from '../../src/smtp/inbound';
import { setQuiet } from '../../src/log';
import { startDnsServer } from '../../test/helpers/dns';
import { fmt, fail } from './lib';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { count: { type: 'string', default: '4000' }, 'negative-ttl': { type: 'string', default: '0' }, 'spool-into': { type: 'string' } },
  strict: true,
});
const COUNT = Number(opts.count);
if (!(Number.isInteger(COUNT) && COUNT > 0)) fail('usage: bun scripts/bench/inbound-cpu.ts [--count 4000] [--negative-ttl 0]');
setQuiet(true);

const dns = await startDnsServer();
dns.zone.setNegativeTtl(Number(opts['negative-ttl']));
const spoolOnly = opts['spool-into'];
const dir = spoolOnly ?? mkdtempSync(join(tmpdir(), 'posthorn-inbound-cpu-'));
if (!spoolOnly) process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const config = loadConfig({
  env: {},
  overrides: { data_dir: dir, 'dns.servers': [dns.address], 'smtp.hostname': 'mx.posthorn.test', 'smtp.starttls_ports': [], 'smtp.tls_ports': [] },
});

if (spoolOnly) {
  // The child: a team with a receiving domain, and the spool filled by the listener's own code.
  const svc = await createServices(config);
  const creds = await createTeam(svc.store);
  const res = await createHandler(svc)(
    new Request('http://127.0.0.1/domains', {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'recv.test', capabilities: { sending: 'disabled', receiving: 'enabled' } }),
    }),
  );
  if (!res.ok) fail(`POST /domains answered ${res.status}: ${await res.text()}`);
  // A message as smtp-source -l 2048 writes it: a few headers, then 2,048 bytes of text lines.
  const message = (i: number) =>
    new TextEncoder().encode(
      `From: <sender@source.test>\r\nTo: <inbox@recv.test>\r\nDate: ${new Date().toUTCString()}\r\nMessage-Id: <${i}.bench@source.test>\r\nSubject: Bench ${i}\r\n\r\n` +
        'La-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-la-\r\n'.repeat(22),
    );
  for (let i = 0; i < COUNT; i++)
    await spoolInbound(
      svc,
      { raw: message(i), envelope: { mail_from: 'sender@source.test', remote_address: '127.0.0.1', helo: 'source.test', tls: false }, sessionId: `bench${i}` },
      ['inbox@recv.test'],
    );
  await closeServices(svc);
  await dns.close();
  process.exit(0);
}

const child = Bun.spawnSync([process.execPath, import.meta.path, '--count', String(COUNT), '--spool-into', dir], { stderr: 'inherit', stdout: 'inherit' });
if (child.exitCode !== 0) fail(`filling the spool failed (${child.exitCode})`);
const svc = await createServices(config);
if ((await svc.store.inboundSpool.counts()).waiting !== COUNT) fail('the spool does not hold the messages');
const office = createBackOffice(config, svc.store);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await office.start();
for (;;) {
  await office.inbound.idle();
  if ((await svc.store.inboundSpool.counts()).waiting === 0) break;
}
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const [team] = await svc.store.teams.everything();
const stored = await svc.store.receivedEmails.count(team!.id);
if (stored !== COUNT) fail(`${stored} of ${COUNT} messages were stored`);
console.log(
  `inbound: ${fmt(COUNT / wall)} msg/s stored; CPU ${fmt((cpu.user + cpu.system) / COUNT, 1)} µs per message (user ${fmt(cpu.user / COUNT, 1)}, system ${fmt(cpu.system / COUNT, 1)}); DNS queries ${dns.queries.length}`,
);
await office.stop();
await closeServices(svc);
await dns.close();
process.exit(0);
