// DKIM key rotation without a restart (docs/mail.md §2.1, docs/api.md §9.10), from start to end,
// with mailauth verifying what a receiver sees at each stage against a test DNS server publishing
// the selectors: the old key signs until every new record verifies; then the new RSA and Ed25519
// keys sign (RFC 8463) while mail signed with the old one still verifies; after the grace period the
// old selector is safe to remove. And the same through `posthorn domains rotate-dkim`.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { waitForEmail, settled } from '../helpers/emails';
import { startDnsServer } from '../helpers/dns';
import { completeRotation, dkimView, previousRemovable } from '../../src/domains/dkim';
import type { DomainRec } from '../../src/store';

let world: MailWorld;

beforeAll(async () => {
  world = await startMailWorld({ 'dkim.rotation_grace': '1h' });
  // Every record of example.test published (verification looks at all of them, not only DKIM):
  // the return path's MX is Posthorn, whose address the SPF record (ip4:127.0.0.0/8) covers.
  world.dns.zone.set('send.example.test', 'MX', [{ exchange: 'mx.posthorn.test', priority: 10 }]);
  world.dns.zone.set('mx.posthorn.test', 'A', ['127.0.0.1']);
  world.dns.zone.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=reject']);
});
afterAll(() => world.stop());

/** Send one email through the API and what mailauth says of its DKIM signatures at the sink. */
async function sendAndVerify(to: string) {
  const { p, sink, dns } = world;
  const { data } = await p.resend.emails.send({ from: 'hello@example.test', to, subject: `rotation ${to}`, text: 'signed' });
  await waitForEmail(p.svc, { team_id: p.creds.team_id, id: data!.id }, settled);
  const msg = sink.to(to)[0]!;
  const res = await authenticateReceived(dns, msg);
  return {
    msg,
    signatures: res.dkim.results.map((r) => ({ selector: r.selector, algo: r.algo, result: r.status.result })),
    dmarc: res.dmarc ? res.dmarc.status.result : false,
  };
}

const domainView = async () => (await world.p.api('GET', `/domains/${world.domain.id}`)).body;
/** A DNS record of a domain's view, as these tests read it. */
interface RecordView {
  record: string;
  name: string;
  status: string;
  value: string;
}
const dkimRecords = (body: { records: RecordView[] }) =>
  body.records.filter((r) => r.record === 'DKIM').map((r) => ({ name: r.name, status: r.status, value: r.value }));
async function verifyNow() {
  expect((await world.p.api('POST', `/domains/${world.domain.id}/verify`)).status).toBe(200);
  await world.p.svc.domains.idle();
}

test('a rotation from start to end: pending records, the switch once they verify, the old selector kept, then safe to remove', async () => {
  const { p, dns } = world;
  const before = await sendAndVerify('before@dest.test');
  expect(before.signatures).toEqual([{ selector: 'posthorn', algo: 'rsa-sha256', result: 'pass' }]);
  expect((await domainView()).dkim).toEqual({ selector: 'posthorn', ed25519_selector: null, algorithms: ['rsa-sha256'], rotation: null, previous: null });

  // Bad input changes nothing.
  expect((await p.api('POST', `/domains/${world.domain.id}/dkim/rotate`, { body: { ed25519: 'yes' } })).body).toMatchObject({
    statusCode: 422,
    name: 'validation_error',
  });
  expect((await p.api('POST', '/domains/0195608a-51e4-70ed-a079-d3bde8e25d94/dkim/rotate')).status).toBe(404);
  expect((await p.api('POST', '/domains/nope/dkim/rotate')).body.name).toBe('invalid_parameter');
  expect((await domainView()).dkim.rotation).toBeNull();

  // 1. Started: new selectors shown as pending DKIM records; the old key still signs.
  const started = await p.api('POST', `/domains/${world.domain.id}/dkim/rotate`, { body: { ed25519: true } });
  expect(started.status).toBe(200);
  const rotation = started.body.dkim.rotation;
  expect(rotation).toMatchObject({ status: 'pending', algorithms: ['rsa-sha256', 'ed25519-sha256'] });
  expect(rotation.selector).toMatch(/^posthorn-\d{8}$/);
  expect(rotation.ed25519_selector).toBe(`${rotation.selector}-ed`);
  expect((await p.api('POST', `/domains/${world.domain.id}/dkim/rotate`)).body.message).toContain('already pending');
  await p.svc.domains.idle();
  const pending = dkimRecords(await domainView());
  expect(pending.map((r) => [r.name, r.status])).toEqual([
    ['posthorn._domainkey', 'verified'],
    [`${rotation.selector}._domainkey`, 'pending'],
    [`${rotation.ed25519_selector}._domainkey`, 'pending'],
  ]);
  expect((await domainView()).status).toBe('verified');
  expect((await sendAndVerify('pending@dest.test')).signatures).toEqual([{ selector: 'posthorn', algo: 'rsa-sha256', result: 'pass' }]);

  // 2. Only the RSA record published: still pending, still the old key.
  const rsa = pending.find((r) => r.name === `${rotation.selector}._domainkey`)!;
  const ed = pending.find((r) => r.name === `${rotation.ed25519_selector}._domainkey`)!;
  expect(ed.value).toMatch(/^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/);
  dns.zone.set(`${rotation.selector}._domainkey.example.test`, 'TXT', [`v=DKIM1; k=rsa; ${rsa.value}`]);
  await verifyNow();
  expect(dkimRecords(await domainView()).map((r) => r.status)).toEqual(['verified', 'verified', 'pending']);
  expect((await domainView()).dkim.rotation).not.toBeNull();
  expect((await sendAndVerify('half@dest.test')).signatures).toEqual([{ selector: 'posthorn', algo: 'rsa-sha256', result: 'pass' }]);

  // 3. Both published: the switch. The new keys sign (both pass); the old selector stays listed.
  dns.zone.set(`${rotation.ed25519_selector}._domainkey.example.test`, 'TXT', [ed.value]);
  await verifyNow();
  const switched = await domainView();
  expect(switched.status).toBe('verified');
  expect(switched.dkim).toMatchObject({
    selector: rotation.selector,
    ed25519_selector: rotation.ed25519_selector,
    algorithms: ['rsa-sha256', 'ed25519-sha256'],
    rotation: null,
  });
  expect(switched.dkim.previous).toMatchObject({ selectors: ['posthorn'], safe_to_remove: false });
  expect(Date.parse(switched.dkim.previous.remove_after) - Date.parse(switched.dkim.previous.retired_at)).toBe(3_600_000);
  expect(dkimRecords(switched).map((r) => [r.name, r.status])).toEqual([
    [`${rotation.selector}._domainkey`, 'verified'],
    [`${rotation.ed25519_selector}._domainkey`, 'verified'],
    ['posthorn._domainkey', 'verified'],
  ]);
  const after = await sendAndVerify('after@dest.test');
  expect(after.signatures).toEqual([
    { selector: rotation.selector, algo: 'rsa-sha256', result: 'pass' },
    { selector: rotation.ed25519_selector, algo: 'ed25519-sha256', result: 'pass' },
  ]);
  expect(after.dmarc).toBe('pass');
  // Mail signed before the switch still verifies while the old record stays published.
  const old = await authenticateReceived(dns, before.msg);
  expect(old.dkim.results.map((r) => r.status.result)).toEqual(['pass']);

  // 4. The grace period over (as an hour passing leaves the record): safe to remove, no longer listed.
  const stored = (await p.svc.store.domains.get(p.creds.team_id, world.domain.id))!;
  await p.svc.store.write(async (tx) =>
    tx.domains.put({ ...stored, dkim_previous: { ...stored.dkim_previous!, remove_after: new Date(Date.now() - 1).toISOString() } }),
  );
  const later = await domainView();
  expect(later.dkim.previous).toMatchObject({ selectors: ['posthorn'], safe_to_remove: true });
  expect(dkimRecords(later).map((r) => r.name)).toEqual([`${rotation.selector}._domainkey`, `${rotation.ed25519_selector}._domainkey`]);
  dns.zone.clear('posthorn._domainkey.example.test');
  expect((await sendAndVerify('removed@dest.test')).signatures.map((s) => s.result)).toEqual(['pass', 'pass']);
}, 60_000);

describe('rotation rules', () => {
  const base = (over: Partial<DomainRec> = {}): DomainRec =>
    ({
      name: 'x.test',
      dkim: { selector: 'posthorn', private_key: 'k1', public_key: 'AAA' },
      dkim_next: { rsa: { selector: 'posthorn-20250101', private_key: 'k2', public_key: 'BBB' }, ed25519: null, started_at: '2025-01-01T00:00:00.000Z' },
      record_status: { DKIM: 'verified', 'DKIM:next': 'verified' },
      ...over,
    }) as DomainRec;

  test('a rotation without Ed25519 drops the Ed25519 signature; the retired records keep their values', () => {
    const d = completeRotation(
      base({
        dkim_ed25519: { selector: 'posthorn-ed', private_key: 'e1', public_key: 'EEE' },
        record_status: { DKIM: 'verified', 'DKIM:ed25519': 'verified', 'DKIM:next': 'verified' },
      }),
      1000,
      5000,
    );
    expect(d.dkim.selector).toBe('posthorn-20250101');
    expect(d.dkim_ed25519).toBeNull();
    expect(d.dkim_previous).toEqual({
      records: [
        { selector: 'posthorn', value: 'p=AAA' },
        { selector: 'posthorn-ed', value: 'v=DKIM1; k=ed25519; p=EEE' },
      ],
      retired_at: new Date(5000).toISOString(),
      remove_after: new Date(6000).toISOString(),
    });
    expect(d.record_status).toEqual({ DKIM: 'verified', 'DKIM:previous': 'verified', 'DKIM:previous-ed25519': 'verified' });
    expect(previousRemovable(d, 5999)).toBe(false);
    expect(previousRemovable(d, 6000)).toBe(true);
    expect(dkimView(d, 6000).previous).toMatchObject({ selectors: ['posthorn', 'posthorn-ed'], safe_to_remove: true });
  });
});

test('posthorn domains rotate-dkim: starts, reports pending, switches once the records are published', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-rotate-'));
  const dns = await startDnsServer();
  const env = { ...process.env, POSTHORN_LOG: 'silent', POSTHORN_DATA_DIR: dir, POSTHORN_DNS_SERVERS: dns.address };
  const main = join(import.meta.dir, '../../src/main.ts');
  // Asynchronously: the test's DNS server answers from this process, which must not be blocked.
  const run = async (...args: string[]) => {
    const r = Bun.spawn([process.execPath, main, ...args], { env, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(r.stdout).text(), new Response(r.stderr).text(), r.exited]);
    return { code, out, err };
  };
  try {
    const { team_id } = JSON.parse((await run('init', '--json')).out);
    const { openStore } = await import('../../src/store');
    const { newDomain } = await import('../../src/domains/create');
    const { newId } = await import('../../src/ids');
    const store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
    const d = await newDomain(team_id, newId(), {
      name: 'cli.test',
      region: 'us-east-1',
      custom_return_path: 'send',
      open_tracking: false,
      click_tracking: false,
      tracking_subdomain: null,
      tls: 'opportunistic',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    } as never);
    await store.write(async (tx) => tx.domains.put(d));
    await store.close();

    expect((await run('domains', 'rotate-dkim', 'nope.test')).code).toBe(1);
    expect((await run('domains', 'rotate-dkim')).code).toBe(2);
    const first = await run('domains', 'rotate-dkim', 'cli.test', '--json');
    expect(first.code).toBe(0);
    const started = JSON.parse(first.out);
    expect(started.dkim.rotation).toMatchObject({ status: 'pending', ed25519_selector: null });
    const next = started.records.find((r: RecordView) => r.name === `${started.dkim.rotation.selector}._domainkey`);
    expect(next.status).toBe('pending');
    const again = await run('domains', 'rotate-dkim', 'cli.test');
    expect(again.out).toContain('DKIM rotation pending for cli.test');
    expect(again.out).toContain(`${started.dkim.rotation.selector}._domainkey.cli.test  TXT  "${next.value}"  (pending)`);
    dns.zone.set(`${started.dkim.rotation.selector}._domainkey.cli.test`, 'TXT', [next.value]);
    const done = await run('domains', 'rotate-dkim', 'cli.test');
    expect(done.code).toBe(0);
    expect(done.out).toContain(`cli.test signs with selector ${started.dkim.rotation.selector} (rsa-sha256).`);
    expect(done.out).toContain('Retired selector(s) posthorn: keep their records published until');
    const status = JSON.parse((await run('domains', 'rotate-dkim', 'cli.test', '--status', '--json')).out);
    expect(status.dkim).toMatchObject({
      selector: started.dkim.rotation.selector,
      rotation: null,
      previous: { selectors: ['posthorn'], safe_to_remove: false },
    });
  } finally {
    await dns.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
