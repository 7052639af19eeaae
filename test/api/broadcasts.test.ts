// Broadcasts (docs/api.md §13): drafts, the send/cancel/delete state rules, pagination, teams.
// The segment here has no contacts, so a broadcast sent now goes queued → sent with no emails; the
// emails themselves are tested in test/broadcasts/send.test.ts. Also (Posthorn): the test send
// (§13.7), and a cancel while sending (§13.3) on a world of its own where a sending limit holds a
// broadcast half sent, half of its emails held in the delivery queue.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { until } from '../helpers/wait';
import { sendBroadcast } from '../../src/broadcasts/send';
import { invalidAddressMessage } from '../../src/sending/address';
import { newId, nowIso } from '../../src/ids';
import { storedEmails } from '../helpers/emails';

let p: Running;
let team: string;
let segmentId: string;

/** A segment through the API (falls back to the store while the segments route is not there). */
async function newSegment(key = p.apiKey, teamId = team): Promise<string> {
  const r = await p.api('POST', '/segments', { body: { name: 'Newsletter' }, key });
  if (r.status === 201) return r.body.id;
  const rec = { id: newId(), team_id: teamId, created_at: nowIso(), name: 'Newsletter' };
  await p.svc.store.write(async (tx) => tx.segments.put(rec));
  return rec.id;
}

/** A domain created through the API, its sending records then marked verified in the store. */
async function verifiedDomain(name: string, key = p.apiKey, teamId = team): Promise<void> {
  const r = await p.api('POST', '/domains', { body: { name }, key });
  expect(r.status).toBe(201);
  await p.svc.store.write(async (tx) => {
    const d = (await tx.domains.get(teamId, r.body.id))!;
    const record_status = { ...d.record_status, 'SPF:MX': 'verified', 'SPF:TXT': 'verified', DKIM: 'verified' } as const;
    tx.domains.put({ ...d, status: 'verified', record_status });
  });
}

const snapshot = async (t = team) => JSON.stringify(await p.svc.store.broadcasts.all(t));

async function draft(extra: Record<string, unknown> = {}): Promise<string> {
  const r = await p.api('POST', '/broadcasts', {
    body: { segment_id: segmentId, from: 'Acme <news@verified.test>', subject: 'Hi', html: '<p>Hi</p>', ...extra },
  });
  expect(r.status).toBe(201);
  return r.body.id;
}

const status = async (id: string) => (await p.svc.store.broadcasts.get(team, id))?.status;

/** A broadcast sent now is queued, then `sent` once its (background) send is done: wait for that. */
async function untilSent(id: string): Promise<void> {
  await until(async () => (await status(id)) === 'sent', `broadcast ${id} sent`, 5_000);
  expect(await status(id)).toBe('sent');
}
const inDays = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString();

beforeAll(async () => {
  p = await startPosthorn();
  team = p.creds.team_id;
  segmentId = await newSegment();
  await verifiedDomain('verified.test');
  await p.api('POST', '/domains', { body: { name: 'unverified.test' } });
});
afterAll(() => p.stop());

describe('create and retrieve', () => {
  test('the SDK creates a draft; GET returns every field, audience_id equal to segment_id', async () => {
    const { data, error } = await p.resend.broadcasts.create({
      segmentId,
      from: 'Acme <news@verified.test>',
      subject: 'Hello {{{contact.first_name|there}}}',
      html: '<p>Hi</p>',
      name: 'March news',
      replyTo: 'reply@verified.test',
      previewText: 'Spring is here',
    });
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'broadcast', id: expect.any(String) } as never);
    const got = await p.resend.broadcasts.get(data!.id);
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'broadcast',
      id: data!.id,
      name: 'March news',
      audience_id: segmentId,
      segment_id: segmentId,
      from: 'Acme <news@verified.test>',
      subject: 'Hello {{{contact.first_name|there}}}',
      reply_to: ['reply@verified.test'],
      preview_text: 'Spring is here',
      html: '<p>Hi</p>',
      text: null,
      status: 'draft',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      scheduled_at: null,
      sent_at: null,
      topic_id: null,
    });
  });

  test('audience_id is accepted as an alias of segment_id (plain HTTP, 201)', async () => {
    const r = await p.api('POST', '/broadcasts', { body: { audience_id: segmentId.toUpperCase(), from: 'news@verified.test', subject: 'S', text: 'T' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ object: 'broadcast', id: expect.any(String) });
    const got = await p.api('GET', `/broadcasts/${r.body.id}`);
    expect(got.body.segment_id).toBe(segmentId);
    expect(got.body.audience_id).toBe(segmentId);
    expect(got.body.reply_to).toBeNull();
    expect(got.body.name).toBeNull();
  });

  test('both segment_id and audience_id may be sent when they agree', async () => {
    const r = await p.api('POST', '/broadcasts', { body: { segment_id: segmentId, audience_id: segmentId, from: 'a@verified.test', subject: 'S' } });
    expect(r.status).toBe(201);
  });

  test('reply_to arrays are kept in order', async () => {
    const id = await draft({ reply_to: ['a@verified.test', 'B <b@verified.test>'] });
    expect((await p.api('GET', `/broadcasts/${id}`)).body.reply_to).toEqual(['a@verified.test', 'B <b@verified.test>']);
  });

  test('bad input is refused and changes nothing', async () => {
    const ok = { segment_id: segmentId, from: 'news@verified.test', subject: 'Hi' };
    const otherTeam = await p.newTeam();
    const foreignSegment = await newSegment(otherTeam.api_key, otherTeam.team_id);
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ from: 'a@verified.test', subject: 'S' }, 422, 'missing_required_field', 'Missing `segment_id` field.'],
      [{ segment_id: segmentId, subject: 'S' }, 422, 'missing_required_field', 'Missing `from` field.'],
      [{ segment_id: segmentId, from: 'a@verified.test' }, 422, 'missing_required_field', 'Missing `subject` field.'],
      [{ ...ok, segment_id: newId() }, 422, 'validation_error', 'The `segment_id` field must name a segment of this team.'],
      [{ ...ok, segment_id: 'nope' }, 422, 'validation_error', 'The `segment_id` field must name a segment of this team.'],
      [{ ...ok, segment_id: foreignSegment }, 422, 'validation_error', 'The `segment_id` field must name a segment of this team.'],
      [{ ...ok, segment_id: undefined, audience_id: newId() }, 422, 'validation_error', 'The `audience_id` field must name a segment of this team.'],
      [{ ...ok, audience_id: foreignSegment }, 422, 'validation_error', 'The `segment_id` and `audience_id` fields must name the same segment.'],
      [{ ...ok, from: 'news@verified' }, 422, 'validation_error', invalidAddressMessage('from')],
      [{ ...ok, from: 'Acme news@verified.test' }, 422, 'validation_error', invalidAddressMessage('from')],
      [{ ...ok, reply_to: ['a@verified.test', 'nope'] }, 422, 'validation_error', invalidAddressMessage('reply_to')],
      [{ ...ok, reply_to: 5 }, 422, 'validation_error', 'The `reply_to` field must be a string or an array of strings.'],
      [{ ...ok, subject: 7 }, 422, 'validation_error', 'The `subject` field must be a string.'],
      [{ ...ok, name: ['x'] }, 422, 'validation_error', 'The `name` field must be a string.'],
      [{ ...ok, send: 'yes' }, 422, 'validation_error', 'The `send` field must be a boolean.'],
      [{ ...ok, scheduled_at: inDays(1) }, 422, 'validation_error', 'The `scheduled_at` field can only be used with `send: true`.'],
      [{ ...ok, topic_id: newId() }, 422, 'validation_error', 'Invalid `topic_id` field: no topic with this id exists.'],
    ];
    const before = await snapshot();
    for (const [body, code, name, message] of cases) {
      const r = await p.api('POST', '/broadcasts', { body });
      expect({ body, res: r.body }).toEqual({ body, res: { statusCode: code, name, message } });
    }
    const bad = await p.api('POST', '/broadcasts', { raw: '{"segment_id":' });
    expect(bad.status).toBe(400);
    expect(await snapshot()).toBe(before);
  });

  test('unknown or malformed ids', async () => {
    expect((await p.api('GET', `/broadcasts/${newId()}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Broadcast not found' });
    const bad = await p.api('GET', '/broadcasts/nope');
    expect(bad.status).toBe(422);
    expect(bad.body.name).toBe('invalid_parameter');
    const sdk = await p.resend.broadcasts.get(newId());
    expect(sdk.error?.name).toBe('not_found');
  });
});

describe('list', () => {
  test('newest first, summary fields only, everything without a limit, cursors both ways', async () => {
    const fresh = await startPosthorn();
    try {
      const ft = fresh.creds.team_id;
      const seg = newId();
      await fresh.svc.store.write(async (tx) => tx.segments.put({ id: seg, team_id: ft, created_at: nowIso(), name: 's' }));
      const ids: string[] = [];
      for (let i = 0; i < 25; i++) {
        const r = await fresh.api('POST', '/broadcasts', { body: { segment_id: seg, from: 'a@x.test', subject: `n${i}`, name: `b${i}` } });
        ids.unshift(r.body.id); // newest first
      }
      const all = await fresh.resend.broadcasts.list();
      expect(all.error).toBeNull();
      expect(all.data!.has_more).toBe(false);
      expect(all.data!.data.map((b) => b.id)).toEqual(ids);
      expect(all.data!.data[0]).toEqual({
        id: ids[0],
        name: 'b24',
        audience_id: seg,
        segment_id: seg,
        status: 'draft',
        created_at: expect.any(String),
        scheduled_at: null,
        sent_at: null,
      });
      const first = await fresh.resend.broadcasts.list({ limit: 10 });
      expect(first.data!.has_more).toBe(true);
      expect(first.data!.data.map((b) => b.id)).toEqual(ids.slice(0, 10));
      const next = await fresh.resend.broadcasts.list({ limit: 10, after: ids[9] });
      expect(next.data!.data.map((b) => b.id)).toEqual(ids.slice(10, 20));
      const last = await fresh.api('GET', `/broadcasts?limit=10&after=${ids[19]}`);
      expect(last.body).toEqual({ object: 'list', has_more: false, data: expect.any(Array) });
      expect(last.body.data.map((b: { id: string }) => b.id)).toEqual(ids.slice(20));
      const back = await fresh.resend.broadcasts.list({ limit: 5, before: ids[10] });
      expect(back.data!.has_more).toBe(true);
      expect(back.data!.data.map((b) => b.id)).toEqual(ids.slice(5, 10));
      for (const q of ['limit=0', 'limit=101', 'after=nope', `after=${ids[0]}&before=${ids[1]}`]) {
        const r = await fresh.api('GET', `/broadcasts?${q}`);
        expect(r.status).toBe(422);
        expect(r.body.name).toBe('validation_error');
      }
    } finally {
      await fresh.stop();
    }
  });
});

describe('update', () => {
  test('the SDK updates a draft; null clears nullable fields; omitted ones stay', async () => {
    const id = await draft({ name: 'old', text: 'plain', reply_to: 'r@verified.test' });
    const seg2 = await newSegment();
    const { data, error } = await p.resend.broadcasts.update(id, {
      name: 'new',
      subject: 'Updated',
      segmentId: seg2,
      from: '"Acme, Inc." <hello@verified.test>',
      replyTo: ['x@verified.test', 'y@verified.test'],
    });
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'broadcast', id } as never);
    let got = (await p.api('GET', `/broadcasts/${id}`)).body;
    expect(got).toMatchObject({
      name: 'new',
      subject: 'Updated',
      segment_id: seg2,
      audience_id: seg2,
      from: '"Acme, Inc." <hello@verified.test>',
      reply_to: ['x@verified.test', 'y@verified.test'],
      html: '<p>Hi</p>',
      text: 'plain',
      status: 'draft',
    });
    const r = await p.api('PATCH', `/broadcasts/${id}`, { body: { html: null, reply_to: null, name: null } });
    expect(r.status).toBe(200);
    got = (await p.api('GET', `/broadcasts/${id}`)).body;
    expect(got).toMatchObject({ html: null, reply_to: null, name: null, text: 'plain', subject: 'Updated' });
  });

  test('bad input, unknown ids and non-drafts are refused and change nothing', async () => {
    const id = await draft();
    const before = await snapshot();
    const cases: [string, Record<string, unknown>, number, string, string][] = [
      [id, { from: 'bad' }, 422, 'validation_error', invalidAddressMessage('from')],
      [id, { from: null }, 422, 'validation_error', 'The `from` field must be a string.'],
      [id, { subject: null }, 422, 'validation_error', 'The `subject` field must be a string.'],
      [id, { segment_id: newId() }, 422, 'validation_error', 'The `segment_id` field must name a segment of this team.'],
      [id, { reply_to: 'a@b' }, 422, 'validation_error', invalidAddressMessage('reply_to')],
      [newId(), { name: 'x' }, 404, 'not_found', 'Broadcast not found'],
      ['nope', { name: 'x' }, 422, 'invalid_parameter', 'The `id` must be a valid UUID.'],
    ];
    for (const [target, body, code, name, message] of cases) {
      const r = await p.api('PATCH', `/broadcasts/${target}`, { body });
      expect({ body, res: r.body }).toEqual({ body, res: { statusCode: code, name, message } });
    }
    expect(await snapshot()).toBe(before);

    const sent = await draft();
    expect((await p.api('POST', `/broadcasts/${sent}/send`, { body: { scheduled_at: inDays(1) } })).status).toBe(200);
    const frozen = await snapshot();
    const r = await p.api('PATCH', `/broadcasts/${sent}`, { body: { name: 'late' } });
    expect(r.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'Only draft broadcasts can be updated.' });
    expect(await snapshot()).toBe(frozen);
  });
});

describe('send', () => {
  test('the SDK sends a draft: it is queued, then sent', async () => {
    const id = await draft();
    const { data, error } = await p.resend.broadcasts.send(id);
    expect(error).toBeNull();
    expect(data).toEqual({ id });
    const got = (await p.api('GET', `/broadcasts/${id}`)).body;
    expect(got).toMatchObject({ status: expect.stringMatching(/^(queued|sent)$/), scheduled_at: null });
    await untilSent(id);
    expect((await p.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'sent', scheduled_at: null, sent_at: expect.any(String) });
  });

  test('with a future scheduled_at it is scheduled; a past one means now', async () => {
    const id = await draft();
    const at = new Date(Date.now() + 3_600_000);
    const { error } = await p.resend.broadcasts.send(id, { scheduledAt: at.toISOString().replace('Z', '+00:00') });
    expect(error).toBeNull();
    expect((await p.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'scheduled', scheduled_at: at.toISOString() });

    const now = await draft();
    const r = await p.api('POST', `/broadcasts/${now}/send`, { body: { scheduled_at: '2020-01-01T00:00:00Z' } });
    expect(r.status).toBe(200);
    expect((await p.api('GET', `/broadcasts/${now}`)).body).toMatchObject({ status: expect.stringMatching(/^(queued|sent)$/), scheduled_at: null });
    await untilSent(now);
  });

  test('create with send: true starts at once, or schedules', async () => {
    const q = await p.api('POST', '/broadcasts', { body: { segment_id: segmentId, from: 'news@verified.test', subject: 'S', text: 'T', send: true } });
    expect(q.status).toBe(201);
    await untilSent(q.body.id);
    const { data, error } = await p.resend.broadcasts.create({
      segmentId,
      from: 'news@verified.test',
      subject: 'S',
      html: '<p>x</p>',
      send: true,
      scheduledAt: inDays(2),
    });
    expect(error).toBeNull();
    expect(await status(data!.id)).toBe('scheduled');
  });

  test('refusals: not a draft, no content, unverified or foreign domain, bad scheduled_at — nothing changes', async () => {
    const other = await p.newTeam();
    await verifiedDomain('other-team.test', other.api_key, other.team_id);
    const started = await draft();
    await p.api('POST', `/broadcasts/${started}/send`);
    await untilSent(started);
    const cases: [string, Record<string, unknown> | undefined, number, string | RegExp][] = [
      [started, undefined, 422, 'Only draft broadcasts can be sent.'],
      [await draft({ html: null }), {}, 422, 'Missing `html` or `text` field.'],
      [await draft({ html: '' }), {}, 422, 'Missing `html` or `text` field.'],
      [await draft({ from: 'news@unverified.test' }), {}, 403, 'The `unverified.test` domain is not verified. Please, add and verify your domain.'],
      [await draft({ from: 'news@unknown.test' }), {}, 403, 'The `unknown.test` domain is not verified. Please, add and verify your domain.'],
      [await draft({ from: 'news@sub.verified.test' }), {}, 403, 'The `sub.verified.test` domain is not verified. Please, add and verify your domain.'],
      [await draft({ from: 'news@other-team.test' }), {}, 403, 'The `other-team.test` domain is not verified. Please, add and verify your domain.'],
      [await draft(), { scheduled_at: inDays(31) }, 422, 'Invalid `scheduled_at` field: it must be at most 30 days in the future.'],
      [await draft(), { scheduled_at: 'next week' }, 422, /^Invalid `scheduled_at` field: it must be an ISO 8601 date-time/],
    ];
    const before = await snapshot();
    for (const [id, body, code, message] of cases) {
      const r = await p.api('POST', `/broadcasts/${id}/send`, { body });
      expect({ id, res: r.body }).toEqual({
        id,
        res: { statusCode: code, name: 'validation_error', message: typeof message === 'string' ? message : expect.stringMatching(message) },
      });
    }
    expect(await snapshot()).toBe(before);
    expect((await p.api('POST', `/broadcasts/${newId()}/send`)).body.name).toBe('not_found');
  });

  test('a segment deleted after the draft was written blocks the send', async () => {
    const seg = await newSegment();
    const id = await draft({ segment_id: seg });
    await p.svc.store.write(async (tx) => tx.segments.remove(team, seg));
    const r = await p.api('POST', `/broadcasts/${id}/send`);
    expect(r.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'The `segment_id` field must name a segment of this team.' });
    expect(await status(id)).toBe('draft');
  });

  test('create with send: true and a refused send stores nothing', async () => {
    const before = await snapshot();
    for (const [body, code] of [
      [{ from: 'news@unverified.test', html: '<p>x</p>' }, 403],
      [{ from: 'news@verified.test' }, 422],
      [{ from: 'news@verified.test', html: '<p>x</p>', scheduled_at: inDays(40) }, 422],
    ] as const) {
      const r = await p.api('POST', '/broadcasts', { body: { segment_id: segmentId, subject: 'S', send: true, ...body } });
      expect(r.status).toBe(code);
      expect(r.body.name).toBe('validation_error');
    }
    expect(await snapshot()).toBe(before);
  });
});

describe('cancel, delete, duplicate', () => {
  test('cancel turns a scheduled broadcast back into a draft; a draft or a sent one is 422 (one being sent: below)', async () => {
    const id = await draft();
    await p.api('POST', `/broadcasts/${id}/send`, { body: { scheduled_at: inDays(1) } });
    const { data, error } = await p.resend.broadcasts.cancel(id);
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'broadcast', id });
    expect((await p.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'draft', scheduled_at: null });

    const again = await p.api('POST', `/broadcasts/${id}/cancel`);
    expect(again.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'Only scheduled broadcasts or broadcasts being sent can be canceled.' });
    const started = await draft();
    await p.api('POST', `/broadcasts/${started}/send`);
    await untilSent(started);
    expect((await p.api('POST', `/broadcasts/${started}/cancel`)).status).toBe(422);
    expect((await p.api('POST', `/broadcasts/${newId()}/cancel`)).status).toBe(404);
  });

  test('delete: drafts and scheduled ones go; started ones stay', async () => {
    const d = await draft();
    const { data, error } = await p.resend.broadcasts.remove(d);
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'broadcast', id: d, deleted: true });
    expect((await p.api('GET', `/broadcasts/${d}`)).status).toBe(404);

    const s = await draft();
    await p.api('POST', `/broadcasts/${s}/send`, { body: { scheduled_at: inDays(1) } });
    expect((await p.api('DELETE', `/broadcasts/${s}`)).status).toBe(200);
    expect(await status(s)).toBeUndefined();

    const q = await draft();
    await p.api('POST', `/broadcasts/${q}/send`);
    const r = await p.api('DELETE', `/broadcasts/${q}`);
    expect(r.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'Only draft or scheduled broadcasts can be deleted.' });
    await untilSent(q);
    expect((await p.api('DELETE', `/broadcasts/${q}`)).status).toBe(422);
    expect((await p.api('DELETE', `/broadcasts/${newId()}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Broadcast not found' });
  });

  test('duplicate copies any broadcast as a new draft', async () => {
    const id = await draft({ name: 'orig', reply_to: ['r@verified.test'], preview_text: 'pre', text: 'plain' });
    await p.api('POST', `/broadcasts/${id}/send`, { body: { scheduled_at: inDays(1) } });
    const { data, error } = await p.resend.broadcasts.duplicate(id);
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'broadcast', id: expect.any(String) } as never);
    expect(data!.id).not.toBe(id);
    const [orig, copy] = await Promise.all([id, data!.id].map(async (x) => (await p.api('GET', `/broadcasts/${x}`)).body));
    expect(copy).toEqual({ ...orig, id: data!.id, created_at: expect.any(String), status: 'draft', scheduled_at: null });
    expect(orig.status).toBe('scheduled');
    expect((await p.api('POST', `/broadcasts/${newId()}/duplicate`)).status).toBe(404);
  });
});

describe('test send (Posthorn, §13.7)', () => {
  const emailsNow = async () => (await storedEmails(p.svc, team)).length;

  test("each address gets the broadcast as a recipient would: placeholders, List-Unsubscribe, `[Test] ` and a tag; not the broadcast's emails", async () => {
    const ann = await p.api('POST', '/contacts', { body: { email: 'ann.test@dest.test', first_name: 'Ann' } });
    expect(ann.status).toBe(201);
    const id = await draft({
      subject: 'Hi {{{contact.first_name|there}}}',
      html: '<p>Hello {{{contact.first_name|friend}}} <{{{contact.email}}}></p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
      preview_text: 'For {{{FIRST_NAME|you}}}',
      reply_to: 'reply@verified.test',
    });
    const before = await snapshot();
    const r = await p.api('POST', `/broadcasts/${id}/test`, { body: { to: ['Ann.Test@dest.test', 'new@dest.test', 'ann.test@dest.test'] } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      object: 'broadcast_test',
      id,
      emails: [
        { id: expect.stringMatching(/^[0-9a-f-]{36}$/), to: 'Ann.Test@dest.test' },
        { id: expect.stringMatching(/^[0-9a-f-]{36}$/), to: 'new@dest.test' },
      ],
    });
    // The broadcast is untouched: still a draft, nothing sent to its segment.
    expect(await snapshot()).toBe(before);
    const [toAnn, toNew] = await Promise.all(r.body.emails.map(async (e: { id: string }) => (await p.api('GET', `/emails/${e.id}`)).body));
    expect(toAnn).toMatchObject({
      subject: '[Test] Hi Ann',
      to: ['Ann.Test@dest.test'],
      reply_to: ['reply@verified.test'],
      tags: [{ name: 'broadcast_test', value: id }],
    });
    expect(toAnn.html).toContain('<p>Hello Ann <ann.test@dest.test></p>');
    expect(toAnn.html).toContain('>For Ann</div>');
    expect(toNew).toMatchObject({ subject: '[Test] Hi there', tags: [{ name: 'broadcast_test', value: id }] });
    expect(toNew.html).toContain('<p>Hello friend <new@dest.test></p>');
    // List-Unsubscribe as a recipient's (RFC 2369, RFC 8058); the href is the same link.
    const stored = (await p.svc.store.emails.get(team, toAnn.id))!;
    expect(stored.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    const link = /^<(http[^>]+)>$/.exec(stored.headers['List-Unsubscribe']!)![1]!;
    expect(toAnn.html).toContain(`href="${link}"`);
    expect(stored).toMatchObject({ broadcast_id: null, contact_id: ann.body.id, topic_id: null });
    expect((await p.svc.store.emails.get(team, toNew.id))!.contact_id).toBeNull();
    // Not the broadcast's: its analytics and recipients never count them.
    expect((await p.api('GET', `/broadcasts/${id}/recipients?type=sent`)).body.data).toEqual([]);
    const metrics = await p.api('GET', `/emails/metrics?broadcast_id=${id}`);
    expect(metrics.body.totals?.sent ?? 0).toBe(0);
    // A single address as a string; the draft stays a draft and can be tested again.
    const one = await p.api('POST', `/broadcasts/${id}/test`, { body: { to: 'solo@dest.test' } });
    expect(one.body.emails).toEqual([{ id: expect.any(String), to: 'solo@dest.test' }]);
    expect(await status(id)).toBe('draft');
  });

  test('bad input: the documented error, no email made', async () => {
    const id = await draft();
    const empty = await draft({ html: null, text: null });
    const unverified = await draft({ from: 'news@unverified.test' });
    const other = await p.newTeam();
    // Only a draft is tested: not a scheduled one, nor one sent.
    const scheduled = await draft();
    await p.api('POST', `/broadcasts/${scheduled}/send`, { body: { scheduled_at: inDays(1) } });
    const sent = await draft();
    await p.api('POST', `/broadcasts/${sent}/send`);
    await untilSent(sent);
    const cases: [string, string, unknown, number, string, string | RegExp][] = [
      ['no `to`', id, {}, 422, 'missing_required_field', 'Missing `to` field.'],
      ['an empty list', id, { to: [] }, 422, 'validation_error', /1 to 5 addresses/],
      ['six addresses', id, { to: ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `${x}@dest.test`) }, 422, 'validation_error', /1 to 5 addresses/],
      ['a number', id, { to: 5 }, 422, 'validation_error', /1 to 5 addresses/],
      ['null', id, { to: null }, 422, 'validation_error', /1 to 5 addresses/],
      ['a malformed address', id, { to: ['ok@dest.test', 'not an address'] }, 422, 'validation_error', invalidAddressMessage('to')],
      ['an unknown broadcast', newId(), { to: 'a@dest.test' }, 404, 'not_found', 'Broadcast not found'],
      ['a scheduled broadcast', scheduled, { to: 'a@dest.test' }, 422, 'validation_error', 'Only draft broadcasts can be tested.'],
      ['a sent broadcast', sent, { to: 'a@dest.test' }, 422, 'validation_error', 'Only draft broadcasts can be tested.'],
      ['no html nor text', empty, { to: 'a@dest.test' }, 422, 'validation_error', 'Missing `html` or `text` field.'],
      ['a from domain not verified', unverified, { to: 'a@dest.test' }, 403, 'validation_error', /not verified/],
    ];
    const before = await emailsNow();
    for (const [what, bid, body, code, name, message] of cases) {
      const r = await p.api('POST', `/broadcasts/${bid}/test`, { body });
      expect({ what, status: r.status, name: r.body.name }).toEqual({ what, status: code, name });
      expect(r.body.message).toMatch(message);
    }
    expect((await p.api('POST', '/broadcasts/nope/test', { body: { to: 'a@dest.test' } })).body).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect((await p.api('POST', `/broadcasts/${id}/test`, { body: { to: 'a@dest.test' }, key: other.api_key })).body).toEqual({
      statusCode: 404,
      name: 'not_found',
      message: 'Broadcast not found',
    });
    expect(await emailsNow()).toBe(before);
    expect([await status(scheduled), await status(sent)]).toEqual(['scheduled', 'sent']);
  });
});

describe('cancel while sending (§13.3)', () => {
  let w: MailWorld;
  beforeAll(async () => {
    // 120 emails an hour: the first batch (100) goes, the second (50) waits for the next hour.
    w = await startMailWorld({ 'limits.emails_per_hour': 120 });
  });
  afterAll(() => w.stop());

  test('stops the remaining recipients; its queued emails are canceled as the queue cancels them; the counts; canceled is final', async () => {
    const t = w.p.creds.team_id;
    const seg = (await w.p.api('POST', '/segments', { body: { name: 'Everyone' } })).body.id;
    // Segment order is contact order: 60 delivered at once, then 90 at a held destination.
    const people = [...Array.from({ length: 60 }, (_, i) => `d${i}@dest.test`), ...Array.from({ length: 90 }, (_, i) => `h${i}@held.test`)];
    for (const email of people) expect((await w.p.api('POST', '/contacts', { body: { email, segments: [seg] } })).status).toBe(201);
    expect((await w.p.api('POST', '/queue/held.test/hold')).status).toBe(200);
    const { data, error } = await w.p.resend.broadcasts.create({ segmentId: seg, from: 'news@example.test', subject: 'Big news', text: 'News.', send: true });
    expect(error).toBeNull();
    const id = data!.id;
    const mine = async () => (await storedEmails(w.p.svc, t)).filter((e) => e.broadcast_id === id);
    // The first batch: 60 delivered, 40 held in the queue; the limit keeps the broadcast queued.
    await until(async () => (await mine()).filter((e) => e.last_event === 'delivered').length === 60, '60 emails delivered', 20_000);
    expect((await mine()).length).toBe(100);
    expect((await w.p.svc.store.broadcasts.get(t, id))!.status).toBe('queued');

    const canceled = await w.p.resend.broadcasts.cancel(id);
    expect(canceled.error).toBeNull();
    expect(canceled.data).toEqual({ object: 'broadcast', id, status: 'canceled', sent: 60, canceled: 40 } as never);
    expect((await w.p.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'canceled', sent_at: null });
    expect((await w.p.api('GET', '/broadcasts')).body.data.find((b: { id: string }) => b.id === id).status).toBe('canceled');
    // The held ones left the queue, canceled; the delivered ones stay delivered.
    const after = await mine();
    expect(after.filter((e) => e.last_event === 'canceled').map((e) => Object.values(e.recipients)[0])).toEqual(Array(40).fill('canceled'));
    expect(after.filter((e) => e.last_event === 'delivered').length).toBe(60);
    expect((await w.p.api('GET', '/queue')).body.data.find((d: { destination: string }) => d.destination === 'held.test')).toMatchObject({ queued: 0 });
    // Nobody else gets it: a send run finds it canceled, and the scheduler has nothing to resume.
    expect(await sendBroadcast(w.p.svc, t, id)).toBe('skipped');
    await w.p.svc.broadcasts.releaseDue(Date.now() + 2 * 3_600_000);
    await w.p.svc.broadcasts.idle();
    expect((await mine()).length).toBe(100);
    expect(await w.p.svc.store.broadcastProgress.has(t, id, (await w.p.svc.store.contacts.find('email', 'd0@dest.test', t))!.id)).toBe(false);

    // Final: not sent again, edited, deleted, canceled again or tested; a duplicate is a draft.
    const refused = [
      ['POST', `/broadcasts/${id}/send`, 'Only draft broadcasts can be sent.'],
      ['PATCH', `/broadcasts/${id}`, 'Only draft broadcasts can be updated.'],
      ['DELETE', `/broadcasts/${id}`, 'Only draft or scheduled broadcasts can be deleted.'],
      ['POST', `/broadcasts/${id}/cancel`, 'Only scheduled broadcasts or broadcasts being sent can be canceled.'],
      ['POST', `/broadcasts/${id}/test`, 'Only draft broadcasts can be tested.'],
    ] as const;
    const bodies: Record<string, unknown> = { PATCH: { name: 'x' }, test: { to: 'me@dest.test' } };
    for (const [method, path, message] of refused)
      expect((await w.p.api(method, path, { body: bodies[method] ?? bodies[path.split('/').pop()!] })).body).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message,
      });
    const dup = await w.p.resend.broadcasts.duplicate(id);
    expect((await w.p.api('GET', `/broadcasts/${dup.data!.id}`)).body.status).toBe('draft');
  }, 60_000);
});

describe('teams', () => {
  test('another team cannot see or touch a broadcast', async () => {
    const id = await draft();
    const other = await p.newTeam();
    const sdk = p.client(other.api_key);
    expect((await sdk.broadcasts.list()).data!.data).toEqual([]);
    expect((await sdk.broadcasts.get(id)).error?.name).toBe('not_found');
    const before = await snapshot();
    for (const [method, path, body] of [
      ['PATCH', `/broadcasts/${id}`, { name: 'x' }],
      ['DELETE', `/broadcasts/${id}`, undefined],
      ['POST', `/broadcasts/${id}/send`, {}],
      ['POST', `/broadcasts/${id}/cancel`, undefined],
      ['POST', `/broadcasts/${id}/duplicate`, undefined],
    ] as const) {
      const r = await p.api(method, path, { body, key: other.api_key });
      expect(r.body).toEqual({ statusCode: 404, name: 'not_found', message: 'Broadcast not found' });
    }
    expect(await snapshot()).toBe(before);
    expect(await snapshot(other.team_id)).toBe('[]');
  });
});
