// GET /deliverability/checks (docs/deliverability.md §2): the doctor's run as a team sees it — the
// machine's checks and its own domains' — through the API and the SDK-style client, on a Posthorn
// whose DNS is a test server.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Running, startPosthorn } from '../helpers/posthorn';
import { type TestDns, startDnsServer } from '../helpers/dns';

let dns: TestDns;
let p: Running;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.zone.set('mx.posthorn.test', 'A', ['127.0.0.1']);
  p = await startPosthorn({ 'dns.servers': [dns.address] });
}, 30_000);
afterAll(async () => {
  await p.stop();
  await dns.close();
});

describe('GET /deliverability/checks', () => {
  test("a team sees the machine's checks and its own domains', never another team's", async () => {
    const mine = await p.api('POST', '/domains', { body: { name: 'mine.test' } });
    dns.zone.publish('mine.test', mine.body.records);
    dns.zone.set('_dmarc.mine.test', 'TXT', ['v=DMARC1; p=reject; rua=mailto:dmarc@mine.test']);
    await p.api('POST', `/domains/${mine.body.id}/verify`);
    const other = await p.newTeam();
    const theirs = await p.api('POST', '/domains', { body: { name: 'theirs.test' }, key: other.api_key });
    await p.api('POST', `/domains/${theirs.body.id}/verify`, { key: other.api_key });
    // A domain whose records were never asked for is not checked.
    await p.api('POST', '/domains', { body: { name: 'idle.test' } });

    const r = await p.api('GET', '/deliverability/checks?refresh=true');
    expect(r.status).toBe(200);
    const checkedAt = r.body.checked_at;
    expect(Date.parse(checkedAt)).toBeGreaterThan(0);
    expect(r.body).toMatchObject({ object: 'deliverability_checks', status: expect.stringMatching(/^(pass|warn|fail)$/) });
    const names = (r.body.checks as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['smtp_hostname', 'public_url', 'sending_addresses', 'smtp_certificate', 'outbound_port_25']));
    expect(names).toEqual(expect.arrayContaining(['spf:mine.test', 'dkim:mine.test', 'dmarc:mine.test', 'dbl:mine.test']));
    expect(names.some((n) => n.includes('theirs.test') || n.includes('idle.test'))).toBe(false);
    const byName = Object.fromEntries((r.body.checks as { name: string; status: string; evidence: string; fix: string }[]).map((c) => [c.name, c]));
    expect(byName['smtp_hostname']).toMatchObject({ status: 'pass', evidence: 'mx.posthorn.test resolves to 127.0.0.1', fix: '' });
    expect(byName['dkim:mine.test'].status).toBe('pass');
    expect(byName['dmarc:mine.test'].status).toBe('pass');
    // Every item is exactly the documented shape (docs/deliverability.md §2).
    for (const c of r.body.checks as object[]) expect(Object.keys(c).sort()).toEqual(['evidence', 'fix', 'name', 'status']);

    const theirView = await p.api('GET', '/deliverability/checks', { key: other.api_key });
    const theirNames = (theirView.body.checks as { name: string }[]).map((c) => c.name);
    expect(theirNames).toContain('dkim:theirs.test');
    expect(theirNames.some((n) => n.includes('mine.test'))).toBe(false);
    // Without refresh: the last run, not a new one.
    expect(theirView.body.checked_at).toBe(checkedAt);
  }, 30_000);

  test('bad input: refresh other than true or false → 422; without a key → 401', async () => {
    const bad = await p.api('GET', '/deliverability/checks?refresh=maybe');
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ name: 'validation_error', message: 'The `refresh` parameter must be true or false.' });
    expect((await p.api('GET', '/deliverability/checks', { key: null })).status).toBe(401);
  });
});
