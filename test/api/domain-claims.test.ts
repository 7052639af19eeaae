// Domain claims (docs/api.md §9.9): the official SDK's `domains.claims.*` against a running server
// whose resolver asks a DNS server started by the test. A team claims a domain another team holds,
// publishes the TXT record, verifies, and the domain moves: created anew on the claimant (fresh
// DKIM key), gone from the holder, nothing of the holder shown. Bad input gets the documented error
// and changes nothing; superseded, canceled and expired claims.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import type { Resend } from 'resend';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { until } from '../helpers/wait';

let p: Running;
let dns: TestDns;
let holder: Resend;
let holderTeam: string;
const UNKNOWN = '0195608a-51e4-70ed-a079-d3bde8e25d94';

beforeAll(async () => {
  dns = await startDnsServer();
  p = await startPosthorn({ 'dns.servers': [dns.address] });
  const other = await p.newTeam();
  holder = p.client(other.api_key);
  holderTeam = other.team_id;
});
afterAll(async () => {
  await p.stop();
  await dns.close();
});

/** Domains and claims of both teams. */
async function snapshot() {
  const { store } = p.svc;
  return JSON.stringify({
    domains: await store.domains.everything(),
    claims: await store.domainClaims.everything(),
  });
}

async function held(name: string): Promise<string> {
  const r = await holder.domains.create({ name });
  expect(r.error).toBeNull();
  return r.data!.id;
}

describe('claiming a domain (SDK)', () => {
  test('claim, publish the TXT record, verify: the domain moves to the claimant, created anew', async () => {
    const theirs = await held('claimed.test');
    const theirKey = (await p.svc.store.domains.get(holderTeam, theirs))!.dkim.public_key;
    // Adding it is refused: it is registered already.
    expect((await p.resend.domains.create({ name: 'claimed.test' })).error).toMatchObject({ statusCode: 403 });

    const claim = await p.resend.domains.claims.create({ name: 'Claimed.TEST', region: 'eu-west-1', customReturnPath: 'bounce', openTracking: true });
    expect(claim.error).toBeNull();
    expect(claim.data).toEqual({
      object: 'domain_claim',
      id: expect.any(String),
      name: 'claimed.test',
      status: 'pending',
      domain_id: expect.any(String),
      region: 'eu-west-1',
      record: { type: 'TXT', name: 'claimed.test', value: expect.stringMatching(/^posthorn-domain-verification=[0-9a-f]{32}$/), ttl: 'Auto' },
      blocked_reason: null,
      failure_reason: null,
      created_at: expect.stringMatching(/Z$/),
      expires_at: expect.stringMatching(/Z$/),
    });
    const { record } = claim.data!;
    const domain_id = claim.data!.domain_id!;
    // Nothing of the holder's domain shows: its id is not the claim's domain id.
    expect(domain_id).not.toBe(theirs);
    expect((await p.resend.domains.claims.get(domain_id)).data).toEqual(claim.data!);

    // Verified before the record is published: looked up, still pending.
    const early = await p.resend.domains.claims.verify(domain_id);
    expect(early.error).toBeNull();
    expect(early.data!.status).toBe('pending');
    await until(() => dns.queries.some((q) => q.name.toLowerCase() === 'claimed.test' && q.type === 'TXT'), 'the TXT lookup');
    await p.svc.claims.idle();
    expect((await p.resend.domains.claims.get(domain_id)).data!.status).toBe('pending');
    expect((await holder.domains.get(theirs)).error).toBeNull();

    // Published (beside another TXT record of the name): the claim completes.
    dns.zone.set('claimed.test', 'TXT', ['v=spf1 -all', record.value]);
    expect((await p.resend.domains.claims.verify(domain_id)).error).toBeNull();
    await until(async () => (await p.resend.domains.claims.get(domain_id)).data!.status === 'completed', 'the claim to complete');

    const mine = await p.resend.domains.get(domain_id);
    expect(mine.error).toBeNull();
    expect(mine.data).toMatchObject({ id: domain_id, name: 'claimed.test', status: 'not_started', region: 'eu-west-1', open_tracking: true });
    const rec = (await p.svc.store.domains.get(p.creds.team_id, domain_id))!;
    expect(rec.custom_return_path).toBe('bounce');
    expect(rec.dkim.public_key).not.toBe(theirKey);
    // The holder's domain is gone, as after a delete.
    expect((await holder.domains.get(theirs)).error).toMatchObject({ statusCode: 404 });
    expect((await holder.domains.list()).data!.data.map((d) => d.name)).not.toContain('claimed.test');
    // The holder never sees the claim.
    expect((await holder.domains.claims.get(domain_id)).error).toMatchObject({ statusCode: 404 });
    // A completed claim is not verified again.
    expect((await p.resend.domains.claims.verify(domain_id)).error).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'Only pending claims can be verified; this one is completed.',
    });
  });

  test('a newer claim supersedes a pending one; deleting the placeholder domain cancels a claim', async () => {
    await held('twice.test');
    const first = (await p.resend.domains.claims.create({ name: 'twice.test' })).data! as { domain_id: string; record: { value: string } };
    const second = (await p.resend.domains.claims.create({ name: 'twice.test' })).data! as { domain_id: string; record: { value: string } };
    expect((await p.resend.domains.claims.get(first.domain_id)).data!.status).toBe('superseded');
    expect(second.record.value).not.toBe(first.record.value);
    const removed = await p.resend.domains.remove(second.domain_id);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ object: 'domain', id: second.domain_id, deleted: true });
    expect((await p.resend.domains.claims.get(second.domain_id)).data!.status).toBe('canceled');
    // A canceled claim is not verified, even with its record published.
    dns.zone.set('twice.test', 'TXT', [second.record.value]);
    expect((await p.resend.domains.claims.verify(second.domain_id)).error).toMatchObject({
      statusCode: 422,
      message: 'Only pending claims can be verified; this one is canceled.',
    });
    expect((await p.resend.domains.remove(second.domain_id)).error).toMatchObject({ statusCode: 404 });
  });

  test('an expired claim reads as expired and is not verified', async () => {
    await held('late.test');
    const c = (await p.resend.domains.claims.create({ name: 'late.test' })).data! as { id: string; domain_id: string; record: { value: string } };
    const rec = (await p.svc.store.domainClaims.get(p.creds.team_id, c.id))!;
    await p.svc.store.write(async (tx) => tx.domainClaims.put({ ...rec, expires_at: new Date(Date.now() - 1000).toISOString() }));
    expect((await p.resend.domains.claims.get(c.domain_id)).data!.status).toBe('expired');
    dns.zone.set('late.test', 'TXT', [c.record.value]);
    expect((await p.resend.domains.claims.verify(c.domain_id)).error).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'The claim has expired: start a new one with POST /domains/claim.',
    });
  });

  test('bad input: the documented error, nothing changes', async () => {
    await held('guarded.test');
    const own = await p.resend.domains.create({ name: 'own.test' });
    expect(own.error).toBeNull();
    const before = await snapshot();
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{}, 422, 'missing_required_field', 'Missing `name` field.'],
      [{ name: 'not a domain' }, 422, 'validation_error', 'Invalid `name` field: must be a domain name such as `example.com`.'],
      [{ name: 'guarded.test', region: 'mars-1' }, 422, 'invalid_region', 'The `region` field must be one of us-east-1, eu-west-1, sa-east-1, ap-northeast-1.'],
      [
        { name: 'guarded.test', custom_return_path: '-x' },
        422,
        'validation_error',
        'Invalid `custom_return_path` field: must be at most 63 letters, digits or hyphens, start with a letter and end with a letter or digit.',
      ],
      [{ name: 'free.test' }, 422, 'validation_error', 'The `free.test` domain is not registered by another team: add it with POST /domains.'],
      [{ name: 'own.test' }, 422, 'validation_error', 'The `own.test` domain already belongs to this team.'],
    ];
    for (const [body, statusCode, name, message] of cases)
      expect({ body, res: (await p.api('POST', '/domains/claim', { body })).body }).toEqual({ body, res: { statusCode, name, message } });
    expect((await p.resend.domains.claims.create({ name: 'free.test' })).error).toMatchObject({ statusCode: 422 });
    expect((await p.resend.domains.claims.get(UNKNOWN)).error).toEqual({ statusCode: 404, name: 'not_found', message: 'Domain claim not found' });
    expect((await p.resend.domains.claims.verify(UNKNOWN)).error).toEqual({ statusCode: 404, name: 'not_found', message: 'Domain claim not found' });
    expect((await p.resend.domains.claims.get('nope')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    // A claimable name's own domain id is no claim.
    expect((await p.resend.domains.claims.get(own.data!.id)).error).toMatchObject({ statusCode: 404 });
    // The literal path: other methods are 405, never a domain whose id is "claim".
    expect((await p.api('GET', '/domains/claim')).status).toBe(405);
    expect((await p.api('DELETE', '/domains/claim', { raw: '{bad' })).status).toBe(405);
    expect(await snapshot()).toBe(before);
  });
});
