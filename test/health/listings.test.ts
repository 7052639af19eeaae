// The doctor end to end (docs/deliverability.md §1–§3.1), against the test DNS server on loopback:
// on a good configuration — smtp.hostname a `.test` name with A and forward-confirmed PTR, a
// verified domain whose SPF authorises the sending address, DKIM published, DMARC p=reject with
// rua, a certificate for the host name from a test CA, port 25 probed at a loopback sink, blocklist
// zones answering clean — every check passes, in `posthorn doctor --json` (the CLI, a child process
// on the same data) and in GET /deliverability/checks. Then the zone lists the address: the API,
// GET /metrics and a webhook say so, once per listing; a SERVFAIL leaves it unknown (never listed,
// never clean, the listing standing); a clean answer closes the incident.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isListed } from '../../src/delivery/listings';
import { type TestDns, startDnsServer } from '../helpers/dns';
import { verifiedDomain } from '../helpers/emails';
import { testCa } from '../helpers/pki';
import { type Running, startPosthorn } from '../helpers/posthorn';
import { type Receiver, startReceiver } from '../helpers/receiver';
import { type Sink, startSink } from '../helpers/sink';

const MAIN = join(import.meta.dir, '../../src/main.ts');
const TOKEN = 'metrics-token-for-listings';
const LISTED = '1.0.0.127.bl.dnsbl.test';

let dns: TestDns;
let sink: Sink;
let p: Running;
let hooks: Receiver;
let env: Record<string, string>;

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSink();
  hooks = await startReceiver();
  const ca = await testCa();
  const leaf = await ca.issue(['mx.posthorn.test']);
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-cert-'));
  writeFileSync(join(dir, 'cert.pem'), leaf.cert);
  writeFileSync(join(dir, 'key.pem'), leaf.key);
  const z = dns.zone;
  z.set('mx.posthorn.test', 'A', ['127.0.0.1']);
  z.set('1.0.0.127.in-addr.arpa', 'PTR', ['mx.posthorn.test']);
  const settings = {
    'dns.servers': [dns.address],
    'smtp.hostname': 'mx.posthorn.test',
    public_url: 'https://posthorn.example.test',
    'smtp.tls_cert': join(dir, 'cert.pem'),
    'smtp.tls_key': join(dir, 'key.pem'),
    'deliverability.sending_addresses': ['127.0.0.1'],
    'deliverability.port25_probe': `127.0.0.1:${sink.port}`,
    'deliverability.dnsbl.ip_zones': ['bl.dnsbl.test'],
    'deliverability.dnsbl.domain_zones': ['dbl.dnsbl.test'],
    'metrics.token': TOKEN,
    // The webhook receiver is on loopback (README "Security").
    'security.allow_private_networks': true,
  };
  p = await startPosthorn(settings);
  await verifiedDomain(p, 'example.test', { dns }); // DKIM key and SPF (ip4:127.0.0.0/8) published
  z.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=reject; rua=mailto:dmarc-reports@example.test']);
  const r = await p.api('POST', '/webhooks', { body: { endpoint: hooks.url, events: ['deliverability.incident'] } });
  expect(r.status).toBe(201);
  // The same configuration for the CLI, through its environment variables (README, "Configuration").
  env = {
    POSTHORN_LOG: 'silent',
    POSTHORN_DATA_DIR: p.dataDir,
    ...(p.svc.config.database.url ? { POSTHORN_DATABASE_URL: p.svc.config.database.url } : {}),
    POSTHORN_DNS_SERVERS: dns.address,
    POSTHORN_SMTP_HOSTNAME: settings['smtp.hostname'],
    POSTHORN_PUBLIC_URL: settings.public_url,
    POSTHORN_SMTP_TLS_CERT: settings['smtp.tls_cert'],
    POSTHORN_SMTP_TLS_KEY: settings['smtp.tls_key'],
    POSTHORN_DELIVERABILITY_SENDING_ADDRESSES: '127.0.0.1',
    POSTHORN_DELIVERABILITY_PORT25_PROBE: settings['deliverability.port25_probe'],
    POSTHORN_DELIVERABILITY_DNSBL_IP_ZONES: 'bl.dnsbl.test',
    POSTHORN_DELIVERABILITY_DNSBL_DOMAIN_ZONES: 'dbl.dnsbl.test',
  };
});
afterAll(async () => {
  await p.stop();
  await hooks.close();
  await sink.close();
  await dns.close();
});

const metrics = async () => (await fetch(`${p.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
const gauge = (text: string) => text.split('\n').find((l) => l.startsWith('posthorn_blocklist_listed{zone="bl.dnsbl.test",target="127.0.0.1"}'));
const runChecks = async () => {
  const r = await p.api('POST', '/deliverability/checks');
  expect(r.status).toBe(200);
  return r.body;
};
const listingIncidents = async () => (await p.api('GET', '/deliverability/incidents')).body.data.filter((i: { kind: string }) => i.kind === 'listing');

describe('a good configuration', () => {
  const NAMES = [
    'smtp_hostname',
    'public_url',
    'sending_addresses',
    'ptr:127.0.0.1',
    'smtp_certificate',
    'outbound_port_25',
    'dnsbl:127.0.0.1',
    'spf:example.test',
    'dkim:example.test',
    'dmarc:example.test',
    'dbl:example.test',
  ];

  test('every check passes in `posthorn doctor --json` (exit 0)', async () => {
    // Not spawnSync: the test DNS server answers from this process.
    const child = Bun.spawn([process.execPath, MAIN, 'doctor', '--json'], { env: { ...process.env, ...env }, stdout: 'pipe' });
    const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    const checks = JSON.parse(out).checks as { name: string; status: string; evidence: string }[];
    expect(checks.map((c) => c.name).sort()).toEqual([...NAMES].sort());
    for (const c of checks) expect({ name: c.name, status: c.status, evidence: c.evidence }).toEqual({ name: c.name, status: 'pass', evidence: c.evidence });
    expect(code).toBe(0);
  });

  test('every check passes in GET /deliverability/checks, the blocklists clean', async () => {
    const r = await p.api('GET', '/deliverability/checks?refresh=true');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('pass');
    expect(r.body.checks.map((c: { name: string }) => c.name).sort()).toEqual([...NAMES].sort());
    for (const c of r.body.checks) expect({ name: c.name, status: c.status }).toEqual({ name: c.name, status: 'pass' });
    expect(r.body.blocklists).toEqual([
      { zone: 'bl.dnsbl.test', target: '127.0.0.1', target_type: 'ip', status: 'clean', codes: [], meaning: null, reason: null, delisting_url: null },
      { zone: 'dbl.dnsbl.test', target: 'example.test', target_type: 'domain', status: 'clean', codes: [], meaning: null, reason: null, delisting_url: null },
    ]);
    expect(gauge(await metrics())).toBe('posthorn_blocklist_listed{zone="bl.dnsbl.test",target="127.0.0.1"} 0');
  });
});

describe('a listed address', () => {
  test('listed: in the API, an incident with its webhook, the gauge at 1, isListed', async () => {
    dns.zone.set(LISTED, 'A', ['127.0.0.2']);
    dns.zone.set(LISTED, 'TXT', ['Listed for spam: see https://dnsbl.test/lookup?ip=127.0.0.1']);
    const run = await runChecks();
    expect(run.status).toBe('fail');
    expect(run.checks.find((c: { name: string }) => c.name === 'dnsbl:127.0.0.1')).toMatchObject({ status: 'fail' });
    expect(run.blocklists[0]).toMatchObject({
      zone: 'bl.dnsbl.test',
      target: '127.0.0.1',
      status: 'listed',
      codes: ['127.0.0.2'],
      meaning: 'listed (127.0.0.2)',
    });

    const [incident, ...more] = await listingIncidents();
    expect(more).toEqual([]);
    expect(incident).toMatchObject({
      object: 'incident',
      kind: 'listing',
      class: 'reputation',
      site: 'bl.dnsbl.test',
      status: 'open',
      closed_at: null,
      code: null,
      email_id: null,
      domain: null,
      sending_ip: '127.0.0.1',
      links: ['https://dnsbl.test/lookup?ip=127.0.0.1'],
      listing: { zone: 'bl.dnsbl.test', target: '127.0.0.1', target_type: 'ip', codes: ['127.0.0.2'], delisting_url: null },
    });
    await hooks.waitFor((rs) => rs.length >= 1, 'the incident webhook');
    expect(hooks.requests[0]!.payload).toMatchObject({ type: 'deliverability.incident', data: { id: incident.id, kind: 'listing', site: 'bl.dnsbl.test' } });
    expect(gauge(await metrics())).toBe('posthorn_blocklist_listed{zone="bl.dnsbl.test",target="127.0.0.1"} 1');
    expect(await isListed(p.svc.store, '127.0.0.1')).toBe(true);

    // The next run finds it again: the same incident, no other.
    await runChecks();
    expect((await listingIncidents()).map((i: { id: string }) => i.id)).toEqual([incident.id]);
  });

  test('a zone that fails is unknown: the listing stands, the gauge leaves it out', async () => {
    dns.zone.fail(LISTED, 'SERVFAIL');
    const run = await runChecks();
    expect(run.blocklists[0]).toMatchObject({ target: '127.0.0.1', status: 'unknown' });
    expect(run.checks.find((c: { name: string }) => c.name === 'dnsbl:127.0.0.1')).toMatchObject({ status: 'warn' });
    expect(gauge(await metrics())).toBeUndefined();
    expect(await isListed(p.svc.store, '127.0.0.1')).toBe(true);
    expect((await listingIncidents())[0]).toMatchObject({ status: 'open' });
    dns.zone.fail(LISTED, null);
  });

  test('delisted: the incident closes, the gauge goes to 0, isListed is false', async () => {
    dns.zone.clear(LISTED);
    const run = await runChecks();
    expect(run.blocklists[0]).toMatchObject({ target: '127.0.0.1', status: 'clean' });
    const [incident] = await listingIncidents();
    expect(incident).toMatchObject({ status: 'closed', closed_at: expect.any(String) });
    expect(gauge(await metrics())).toBe('posthorn_blocklist_listed{zone="bl.dnsbl.test",target="127.0.0.1"} 0');
    expect(await isListed(p.svc.store, '127.0.0.1')).toBe(false);
    expect(hooks.requests.filter((h) => h.payload.type === 'deliverability.incident')).toHaveLength(1);
  });
});
