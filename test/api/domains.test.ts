// The domains API (docs/api.md §9) through the official SDK and plain HTTP: the record set of
// §9.7, validation (422 before 403, nothing stored on error), 404/422 path ids, team isolation,
// PATCH partial updates, list pagination. Verification itself: test/domains/verify.test.ts.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { createPublicKey } from 'node:crypto';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startPosthorn, type Running } from '../helpers/posthorn';

const SMTP_HOST = 'mx.posthorn.test';

let dns: TestDns;
let p: Running;
let seq = 0;
const uniq = (label = 'api') => `${label}-${process.pid}-${seq++}.test`;

beforeAll(async () => {
  dns = await startDnsServer();
  p = await startPosthorn({ 'dns.servers': [dns.address], public_url: 'https://links.posthorn.test:8443' });
});

afterAll(async () => {
  await p?.stop();
  await dns?.close();
});

type Rec = { record: string; name: string; type: string; value: string; ttl: string; status: string; priority?: number };

async function create(body: Record<string, unknown>) {
  const res = await p.api('POST', '/domains', { body });
  expect(res.status).toBe(201);
  return res.body as { id: string; name: string; records: Rec[]; [k: string]: unknown };
}

/** Every domain of the bootstrap team, straight from the store (to prove a rejected request wrote nothing). */
const stored = () => p.svc.store.domains.all(p.creds.team_id);

describe('POST /domains', () => {
  test('default domain: the §9.7 sending records, DMARC apart, DKIM an RSA-2048 key, no object key', async () => {
    const name = uniq();
    const { data, error } = await p.resend.domains.create({ name: name.toUpperCase() });
    expect(error).toBeNull();
    const d = data!;
    expect(d).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name, // stored lowercased
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      status: 'not_started',
      open_tracking: false,
      click_tracking: false,
      capabilities: { sending: 'enabled', receiving: 'disabled' },
      records: expect.any(Array),
      recommended_records: expect.any(Array),
      region: 'us-east-1',
    } as never);
    expect('object' in d).toBe(false);
    // Optional in the SDK's type, never null: absent without a tracking subdomain (docs/api.md §1.5).
    expect('tracking_subdomain' in d).toBe(false);
    const dkimValue = d.records.find((r) => r.record === 'DKIM')!.value;
    expect(d.records).toEqual([
      { record: 'SPF', name: 'send', type: 'MX', value: SMTP_HOST, ttl: 'Auto', status: 'not_started', priority: 10 },
      { record: 'SPF', name: 'send', type: 'TXT', value: `v=spf1 a:${SMTP_HOST} ~all`, ttl: 'Auto', status: 'not_started' },
      { record: 'DKIM', name: 'posthorn._domainkey', type: 'TXT', value: dkimValue, ttl: 'Auto', status: 'not_started' },
    ] as never);
    // Only Resend's record kinds in records[] (typed enums reject others); DMARC is recommended apart.
    expect((d as unknown as { recommended_records: Rec[] }).recommended_records).toEqual([
      // rua: the return-path host's address, where Posthorn reads the reports (docs/deliverability.md §4).
      { record: 'DMARC', name: '_dmarc', type: 'TXT', value: `v=DMARC1; p=none; rua=mailto:dmarc-reports@send.${d.name};`, ttl: 'Auto', status: 'not_started' },
    ]);
    expect(dkimValue).toMatch(/^p=[A-Za-z0-9+/]+=*$/);
    const key = createPublicKey({ key: Buffer.from(dkimValue.slice(2), 'base64'), format: 'der', type: 'spki' });
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(key.asymmetricKeyDetails!.modulusLength).toBe(2048);
    // The private half stays in the store and matches.
    const rec = (await p.svc.store.domains.get(p.creds.team_id, d.id))!;
    expect(createPublicKey(rec.dkim.private_key).export({ type: 'spki', format: 'der' }).toString('base64')).toBe(dkimValue.slice(2));
    // Plain HTTP: 201.
    const res = await p.api('POST', '/domains', { body: { name: uniq() } });
    expect(res.status).toBe(201);
    // Every domain gets its own key.
    expect(res.body.records.find((r: Rec) => r.record === 'DKIM').value).not.toBe(dkimValue);
  });

  test('options: region, receiving, tracking subdomain, custom return path, tracking flags, tls', async () => {
    const name = uniq();
    const { data, error } = await p.resend.domains.create({
      name,
      region: 'eu-west-1',
      customReturnPath: 'Bounces',
      capabilities: { receiving: 'enabled' },
      trackingSubdomain: 'Links',
      openTracking: true,
      clickTracking: true,
      tls: 'enforced',
    });
    expect(error).toBeNull();
    const d = data!;
    expect(d).toMatchObject({
      region: 'eu-west-1',
      open_tracking: true,
      click_tracking: true,
      tracking_subdomain: 'links',
      capabilities: { sending: 'enabled', receiving: 'enabled' },
    });
    expect(d.records.map((r) => [r.record, r.type, r.name, r.value.startsWith('p=') ? 'p=…' : r.value, (r as Rec).priority])).toEqual([
      ['SPF', 'MX', 'bounces', SMTP_HOST, 10],
      ['SPF', 'TXT', 'bounces', `v=spf1 a:${SMTP_HOST} ~all`, undefined],
      ['DKIM', 'TXT', 'posthorn._domainkey', 'p=…', undefined],
      ['Receiving', 'MX', '@', SMTP_HOST, 10],
      ['Tracking', 'CNAME', 'links', 'links.posthorn.test', undefined], // the host of public_url
    ]);
    expect((d as unknown as { recommended_records: Rec[] }).recommended_records.map((r) => r.record)).toEqual(['DMARC']);
    expect((await p.svc.store.domains.get(p.creds.team_id, d.id))!.tls).toBe('enforced');
  });

  test('receiving only: Receiving MX and DMARC, no sending records', async () => {
    const d = await create({ name: uniq(), capabilities: { sending: 'disabled', receiving: 'enabled' } });
    expect(d.capabilities).toEqual({ sending: 'disabled', receiving: 'enabled' });
    expect(d.records.map((r) => r.record)).toEqual(['Receiving']);
    expect((d.recommended_records as Rec[]).map((r) => r.record)).toEqual(['DMARC']);
  });

  test('IDN names are stored in their ASCII form', async () => {
    const label = `bücher-${process.pid}-${seq++}`;
    const d = await create({ name: `${label}.test` });
    expect(d.name).toBe(`${new URL(`http://${label}.test`).hostname}`);
    expect(d.name.startsWith('xn--')).toBe(true);
  });

  test('duplicate name → 403 validation_error, also across teams and letter case', async () => {
    const name = uniq();
    await create({ name });
    const other = await p.newTeam();
    const before = (await stored()).length;
    for (const [client, n] of [
      [p.resend, name],
      [p.resend, name.toUpperCase()],
      [p.client(other.api_key), name],
      [p.client(other.api_key), `${name}.`],
    ] as const) {
      const { data, error } = await client.domains.create({ name: n });
      expect(data).toBeNull();
      expect(error).toEqual({ statusCode: 403, name: 'validation_error', message: `The \`${name}\` domain has been registered already.` } as never);
    }
    expect((await stored()).length).toBe(before);
    expect(await p.svc.store.domains.all(other.team_id)).toHaveLength(0);
  });

  test('concurrent creates of one name: one wins', async () => {
    const name = uniq();
    const results = await Promise.all(Array.from({ length: 4 }, () => p.api('POST', '/domains', { body: { name } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 403, 403, 403]);
  });

  test('invalid input → 422 and nothing stored', async () => {
    const before = (await stored()).length;
    const cases: [unknown, number, string, string?][] = [
      [{}, 422, 'missing_required_field', 'Missing `name` field.'],
      [{ name: 42 }, 422, 'validation_error'],
      [{ name: '' }, 422, 'validation_error'],
      [{ name: 'localhost' }, 422, 'validation_error'],
      [{ name: 'not a domain.test' }, 422, 'validation_error'],
      [{ name: '-bad.test' }, 422, 'validation_error'],
      [{ name: 'a..test' }, 422, 'validation_error'],
      [{ name: 'under_score.test' }, 422, 'validation_error'],
      [{ name: '127.0.0.1' }, 422, 'validation_error'],
      [{ name: `${'a'.repeat(64)}.test` }, 422, 'validation_error'],
      [{ name: uniq(), region: 'mars-north-1' }, 422, 'invalid_region'],
      [{ name: uniq(), region: 7 }, 422, 'validation_error'],
      [{ name: uniq(), custom_return_path: '1bounce' }, 422, 'validation_error'],
      [{ name: uniq(), custom_return_path: 'bounce-' }, 422, 'validation_error'],
      [{ name: uniq(), custom_return_path: 'bo_unce' }, 422, 'validation_error'],
      [{ name: uniq(), custom_return_path: 'a.b' }, 422, 'validation_error'],
      [{ name: uniq(), custom_return_path: '' }, 422, 'validation_error'],
      [{ name: uniq(), custom_return_path: 'b'.repeat(64) }, 422, 'validation_error'],
      [{ name: uniq(), tracking_subdomain: 'two.labels' }, 422, 'validation_error'],
      [{ name: uniq(), tracking_subdomain: '' }, 422, 'validation_error'],
      [{ name: uniq(), tracking_subdomain: 'send' }, 422, 'validation_error'], // the return path's name
      [{ name: uniq(), open_tracking: 'yes' }, 422, 'validation_error'],
      [{ name: uniq(), tls: 'always' }, 422, 'validation_error'],
      [{ name: uniq(), capabilities: { sending: 'disabled' } }, 422, 'validation_error'],
      [{ name: uniq(), capabilities: { sending: 'disabled', receiving: 'disabled' } }, 422, 'validation_error'],
      [{ name: uniq(), capabilities: { receiving: 'on' } }, 422, 'validation_error'],
    ];
    for (const [body, status, name, message] of cases) {
      const res = await p.api('POST', '/domains', { body });
      expect({ body, status: res.status, name: res.body.name }).toEqual({ body, status, name });
      expect(res.body.statusCode).toBe(status);
      expect(typeof res.body.message).toBe('string');
      if (message) expect(res.body.message).toBe(message);
    }
    expect((await stored()).length).toBe(before);
    // The messages name the field.
    expect((await p.api('POST', '/domains', { body: { name: uniq(), region: 'x' } })).body.message).toContain('`region`');
    expect((await p.api('POST', '/domains', { body: { name: uniq(), custom_return_path: '1' } })).body.message).toContain('`custom_return_path`');
    expect((await p.api('POST', '/domains', { body: { name: 'nope' } })).body.message).toContain('`name`');
  });

  test('field errors come before the duplicate check (422 before 403)', async () => {
    const name = uniq();
    await create({ name });
    expect((await p.api('POST', '/domains', { body: { name, custom_return_path: '9' } })).status).toBe(422);
    expect((await p.api('POST', '/domains', { body: { name, region: 'nowhere' } })).body.name).toBe('invalid_region');
    expect((await p.api('POST', '/domains', { body: { name, capabilities: { sending: 'disabled' } } })).status).toBe(422);
  });

  test('unparseable JSON → 400, nothing stored', async () => {
    const before = (await stored()).length;
    const res = await p.api('POST', '/domains', { raw: '{"name": "x.test"' });
    expect(res.status).toBe(400);
    expect(res.body.name).toBe('validation_error');
    expect((await stored()).length).toBe(before);
  });
});

describe('GET /domains/{id} and GET /domains', () => {
  test('get: object domain with records; list items without records', async () => {
    const c = await create({ name: uniq(), tracking_subdomain: 'trk' });
    const { data, error } = await p.resend.domains.get(c.id);
    expect(error).toBeNull();
    expect(data).toEqual({
      object: 'domain',
      id: c.id,
      name: c.name,
      status: 'not_started',
      created_at: c.created_at,
      region: 'us-east-1',
      open_tracking: false,
      click_tracking: false,
      tracking_subdomain: 'trk',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
      records: c.records,
      recommended_records: c.recommended_records,
      // Posthorn: how delivery uses TLS (§9.2), the DKIM keys and any rotation (docs/api.md §9.10).
      tls: 'opportunistic',
      dkim: { selector: 'posthorn', ed25519_selector: null, algorithms: ['rsa-sha256'], rotation: null, previous: null },
    } as never);
    expect(c.records.map((r) => r.record)).not.toContain('DMARC');
    // Without a tracking subdomain the key is absent, not null.
    const plain = await create({ name: uniq() });
    expect('tracking_subdomain' in (await p.api('GET', `/domains/${plain.id}`)).body).toBe(false);
    const list = await p.resend.domains.list();
    expect(list.error).toBeNull();
    const item = list.data!.data.find((x) => x.id === c.id)!;
    expect(item).toEqual({
      id: c.id,
      name: c.name,
      status: 'not_started',
      created_at: c.created_at,
      region: 'us-east-1',
      open_tracking: false,
      click_tracking: false,
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    } as never);
  });

  test('list: no limit returns every domain; limit paginates newest first', async () => {
    const team = await p.newTeam();
    const sdk = p.client(team.api_key);
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      const { data, error } = await sdk.domains.create({ name: uniq('list') });
      expect(error).toBeNull();
      ids.push(data!.id);
    }
    const newestFirst = [...ids].reverse();
    const all = await sdk.domains.list();
    expect(all.data).toMatchObject({ object: 'list', has_more: false });
    expect(all.data!.data.map((d) => d.id)).toEqual(newestFirst);

    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { data, error } = await sdk.domains.list(after ? { limit: 10, after } : { limit: 10 });
      expect(error).toBeNull();
      seen.push(...data!.data.map((d) => d.id));
      if (!data!.has_more) break;
      after = data!.data.at(-1)!.id;
    }
    expect(seen).toEqual(newestFirst);

    const back = await sdk.domains.list({ limit: 5, before: newestFirst[10] });
    expect(back.data!.data.map((d) => d.id)).toEqual(newestFirst.slice(5, 10));
    expect(back.data!.has_more).toBe(true);

    const bad = await p.api('GET', '/domains?limit=0', { key: team.api_key });
    expect(bad.status).toBe(422);
    expect(bad.body.name).toBe('validation_error');
    expect((await p.api('GET', '/domains?limit=101', { key: team.api_key })).status).toBe(422);
    expect((await p.api('GET', '/domains?after=nope', { key: team.api_key })).status).toBe(422);
  });
});

describe('PATCH /domains/{id}', () => {
  test('partial update: omitted keys keep their value', async () => {
    const c = await create({ name: uniq(), tracking_subdomain: 'links', click_tracking: true });
    const { data, error } = await p.resend.domains.update({ id: c.id, openTracking: true });
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'domain', id: c.id });
    let d = (await p.resend.domains.get(c.id)).data!;
    expect(d).toMatchObject({
      open_tracking: true,
      click_tracking: true,
      tracking_subdomain: 'links',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    });

    // capabilities are merged key by key.
    expect((await p.resend.domains.update({ id: c.id, capabilities: { receiving: 'enabled' } })).error).toBeNull();
    d = (await p.resend.domains.get(c.id)).data!;
    expect(d.capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(d.records.map((r) => r.record)).toContain('Receiving');
    expect(d).toMatchObject({ open_tracking: true, click_tracking: true });

    expect((await p.resend.domains.update({ id: c.id, clickTracking: false, tls: 'enforced', trackingSubdomain: 'Clicks' })).error).toBeNull();
    d = (await p.resend.domains.get(c.id)).data!;
    expect(d).toMatchObject({ open_tracking: true, click_tracking: false, tracking_subdomain: 'clicks' });
    expect(d.records.find((r) => r.record === 'Tracking')).toMatchObject({ name: 'clicks', status: 'not_started' });
    expect((await p.svc.store.domains.get(p.creds.team_id, c.id))!.tls).toBe('enforced');
    expect(((await p.resend.domains.get(c.id)).data as unknown as { tls: string }).tls).toBe('enforced');

    // An empty body changes nothing.
    const res = await p.api('PATCH', `/domains/${c.id}`, { body: {} });
    expect(res.status).toBe(200);
    expect((await p.resend.domains.get(c.id)).data).toEqual(d);
  });

  test('invalid updates → 422 and the domain is unchanged', async () => {
    const c = await create({ name: uniq(), tracking_subdomain: 'links', capabilities: { receiving: 'enabled' } });
    const before = await p.svc.store.domains.get(p.creds.team_id, c.id);
    const cases: unknown[] = [
      { tracking_subdomain: null },
      { tracking_subdomain: 'a.b' },
      { tracking_subdomain: 'send' },
      { capabilities: { sending: 'disabled', receiving: 'disabled' } },
      { open_tracking: 'true' },
      { tls: 'sometimes' },
      { capabilities: { sending: 'off' } },
      { open_tracking: true, tracking_subdomain: null }, // nothing of it applies
    ];
    for (const body of cases) {
      const res = await p.api('PATCH', `/domains/${c.id}`, { body });
      expect({ body, status: res.status, name: res.body.name }).toEqual({ body, status: 422, name: 'validation_error' });
    }
    // Both capabilities off in two steps: the second is refused.
    expect((await p.api('PATCH', `/domains/${c.id}`, { body: { capabilities: { sending: 'disabled' } } })).status).toBe(200);
    expect((await p.api('PATCH', `/domains/${c.id}`, { body: { capabilities: { receiving: 'disabled' } } })).status).toBe(422);
    const after = (await p.svc.store.domains.get(p.creds.team_id, c.id))!;
    expect(after).toEqual({ ...before!, capabilities: { sending: 'disabled', receiving: 'enabled' } });
    // The SDK's error for tracking_subdomain null:
    const { error } = await p.resend.domains.update({ id: c.id, trackingSubdomain: null as never });
    expect(error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(error!.message).toContain('`tracking_subdomain`');
  });
});

describe('verify and delete', () => {
  test('verify answers {object, id}; delete answers deleted:true and frees the name', async () => {
    const c = await create({ name: uniq() });
    const v = await p.resend.domains.verify(c.id);
    expect(v).toMatchObject({ data: { object: 'domain', id: c.id }, error: null });
    await p.svc.domains.idle();
    const del = await p.resend.domains.remove(c.id);
    expect(del).toMatchObject({ data: { object: 'domain', id: c.id, deleted: true }, error: null });
    expect((await p.resend.domains.get(c.id)).error).toEqual({ statusCode: 404, name: 'not_found', message: 'Domain not found' } as never);
    expect((await p.resend.domains.list()).data!.data.some((d) => d.id === c.id)).toBe(false);
    expect((await p.resend.domains.remove(c.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    // The name can be registered again, by anyone.
    const other = await p.newTeam();
    const again = await p.client(other.api_key).domains.create({ name: c.name });
    expect(again.error).toBeNull();
  });
});

describe('path ids and team isolation', () => {
  test('unknown id → 404 "Domain not found"; non-UUID → 422 invalid_parameter', async () => {
    const unknown = '0195606f-e220-752e-89a7-834df2a74de4';
    const routes: [string, string, unknown?][] = [
      ['GET', '/domains/%s'],
      ['PATCH', '/domains/%s', { open_tracking: true }],
      ['POST', '/domains/%s/verify'],
      ['DELETE', '/domains/%s'],
    ];
    for (const [method, path, body] of routes) {
      const nf = await p.api(method, path.replace('%s', unknown), { body });
      expect({ method, status: nf.status, body: nf.body }).toEqual({
        method,
        status: 404,
        body: { statusCode: 404, name: 'not_found', message: 'Domain not found' },
      });
      const bad = await p.api(method, path.replace('%s', 'not-a-uuid'), { body });
      expect({ method, status: bad.status, body: bad.body }).toEqual({
        method,
        status: 422,
        body: { statusCode: 422, name: 'invalid_parameter', message: 'The `id` must be a valid UUID.' },
      });
    }
  });

  test("another team's domain is invisible and untouchable", async () => {
    const c = await create({ name: uniq() });
    const other = await p.newTeam();
    const sdk = p.client(other.api_key);
    const notFound = { statusCode: 404, name: 'not_found', message: 'Domain not found' };
    expect((await sdk.domains.get(c.id)).error).toEqual(notFound as never);
    expect((await sdk.domains.update({ id: c.id, openTracking: true })).error).toEqual(notFound as never);
    expect((await sdk.domains.verify(c.id)).error).toEqual(notFound as never);
    expect((await sdk.domains.remove(c.id)).error).toEqual(notFound as never);
    expect((await sdk.domains.list()).data!.data).toEqual([]);
    // Untouched.
    const d = (await p.resend.domains.get(c.id)).data!;
    expect(d).toMatchObject({ status: 'not_started', open_tracking: false });
  });
});
