// Mail Posthorn sends dashboard users itself (docs/api.md §19.16): invitations, password resets
// and address changes, each an email through the one sending core from `auth.system_from` — its
// link single-use, expiring, and never shown to the team through the API — and the SMTP settings.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { verifiedDomain, storedEmails } from '../helpers/emails';
import type { EmailRec } from '../../src/store';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn();
});
afterAll(() => p.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(p.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** The system emails to `to`, newest last, with the link their content holds. */
async function mailTo(to: string): Promise<{ email: EmailRec; link: string }[]> {
  const all = await storedEmails(p.svc, p.creds.team_id);
  const out: { email: EmailRec; link: string }[] = [];
  for (const e of all)
    if (e.to.includes(to) && e.tags.some((t) => t.name === 'posthorn_system')) {
      const content = (await p.svc.store.emailContent.get(e.team_id, e.id))!;
      out.push({ email: e, link: /(http:\/\/\S+\/dashboard\/\S+)/.exec(content.text!)![1]! });
    }
  return out;
}

async function signIn(email: string, password: string) {
  return post('/auth/sign-in', { email, password });
}

describe('without a verified domain for auth.system_from, nothing is mailed', () => {
  test('an invitation still answers its link, with mailed: false', async () => {
    const r = await p.api('POST', '/team/invites', { body: { email: 'early@dest.test' } });
    expect(r.status).toBe(201);
    expect(r.body.mailed).toBe(false);
    expect(r.body.url).toContain('/dashboard/invite/');
    expect(await mailTo('early@dest.test')).toEqual([]);
  });
});

describe('with the domain verified', () => {
  beforeAll(async () => {
    // auth.system_from defaults to posthorn@<smtp.hostname>: the test server's is mx.posthorn.test.
    await verifiedDomain(p, 'mx.posthorn.test');
  });

  test('an invitation is mailed through the sending core; the team sees the email, not its link', async () => {
    const r = await p.api('POST', '/team/invites', { body: { email: 'invited@dest.test', role: 'viewer' } });
    expect(r.status).toBe(201);
    expect(r.body.mailed).toBe(true);
    const [m] = await mailTo('invited@dest.test');
    expect(m!.link).toBe(r.body.url);
    expect(m!.email.from).toBe('Posthorn <posthorn@mx.posthorn.test>');
    expect(m!.email.tags).toEqual([{ name: 'posthorn_system', value: 'invite' }]);
    const shown = await p.api('GET', `/emails/${m!.email.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.html).toBeNull();
    expect(shown.body.text).not.toContain('/dashboard/invite/');
    expect((await p.api('GET', `/emails/${m!.email.id}/raw`)).status).toBe(404);
  });

  test('password reset: the same answer for any address; a single-use link; sessions end', async () => {
    const owner = p.creds.admin_email;
    const known = await post('/auth/password-reset', { email: owner });
    const unknown = await post('/auth/password-reset', { email: 'nobody-here@dest.test' });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(await known.text()).toBe(await unknown.text());
    expect(await mailTo('nobody-here@dest.test')).toEqual([]);
    const mails = await mailTo(owner);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.email.tags).toEqual([{ name: 'posthorn_system', value: 'password_reset' }]);
    const token = mails[0]!.link.split('/').pop()!;
    const before = await signIn(owner, p.creds.admin_password);
    expect(before.status).toBe(200);
    const cookie = /posthorn_session=[^;]+/.exec(before.headers.get('set-cookie')!)![0];

    expect((await post(`/auth/password-reset/${token}`, { password: 'short' })).status).toBe(422);
    const done = await post(`/auth/password-reset/${token}`, { password: 'a-new-owner-password' });
    expect(done.status).toBe(200);
    expect((await post(`/auth/password-reset/${token}`, { password: 'again-a-new-password' })).status).toBe(404); // once
    expect((await fetch(`${p.url}/auth/session`, { headers: { cookie } })).status).toBe(401); // sessions ended
    expect((await signIn(owner, p.creds.admin_password)).status).toBe(401);
    expect((await signIn(owner, 'a-new-owner-password')).status).toBe(200);
    const log = (await p.api('GET', '/audit-log?action=auth.&limit=100')).body.data as { action: string }[];
    expect(log.map((e) => e.action)).toContain('auth.password_reset');
    expect(log.map((e) => e.action)).toContain('auth.password_reset_requested');
    p.creds.admin_password = 'a-new-owner-password';
  });

  test('a reset link expires; a newer one replaces it', async () => {
    const owner = p.creds.admin_email;
    await post('/auth/password-reset', { email: owner });
    await post('/auth/password-reset', { email: owner });
    const [older, newer] = (await mailTo(owner)).slice(-2);
    expect((await post(`/auth/password-reset/${older!.link.split('/').pop()}`, { password: 'replaced-password-1' })).status).toBe(404);
    const tokens = await p.svc.store.accountTokens.all(p.creds.team_id);
    await p.svc.store.write(async (tx) => {
      for (const t of tokens) tx.accountTokens.put({ ...t, expires_at: Date.now() - 1 });
    });
    expect((await post(`/auth/password-reset/${newer!.link.split('/').pop()}`, { password: 'expired-password-1' })).status).toBe(404);
  });

  test('reset requests are limited per address, known or not', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await post('/auth/password-reset', { email: 'limited@dest.test' })).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses[5]).toBe(429);
  });

  test('an email change is confirmed by a link mailed to the new address', async () => {
    const s = await signIn(p.creds.admin_email, p.creds.admin_password);
    const cookie = /posthorn_session=[^;]+/.exec(s.headers.get('set-cookie')!)![0];
    const csrf = ((await s.json()) as { csrf_token: string }).csrf_token;
    const asOwner = (body: unknown) => post('/auth/email', body, { cookie, 'x-csrf-token': csrf });
    expect((await asOwner({ email: 'owner-new@dest.test', password: 'wrong-password' })).status).toBe(403);
    const asked = await asOwner({ email: 'owner-new@dest.test', password: p.creds.admin_password });
    expect(asked.status).toBe(202);
    expect(((await asked.json()) as { email: string }).email).toBe('owner-new@dest.test');
    const [m] = await mailTo('owner-new@dest.test');
    expect(m!.email.tags).toEqual([{ name: 'posthorn_system', value: 'email_change' }]);
    // Not changed until confirmed.
    expect((await signIn('owner-new@dest.test', p.creds.admin_password)).status).toBe(401);
    const token = m!.link.split('/').pop()!;
    const confirmed = await post(`/auth/email/confirm/${token}`, {});
    expect(confirmed.status).toBe(200);
    expect((await post(`/auth/email/confirm/${token}`, {})).status).toBe(404);
    expect((await signIn('owner-new@dest.test', p.creds.admin_password)).status).toBe(200);
    const log = (await p.api('GET', '/audit-log?action=auth.&limit=100')).body.data as { action: string; details: unknown }[];
    expect(log.find((e) => e.action === 'auth.email_changed')!.details).toEqual({ email: 'owner-new@dest.test' });
    p.creds.admin_email = 'owner-new@dest.test';
  });

  test('GET /smtp-settings: host, ports, user name, and that the password is an API key', async () => {
    const r = await p.api('GET', '/smtp-settings');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'smtp_settings', host: 'mx.posthorn.test', username: 'resend', tls_ports: [], starttls_ports: [] });
  });
});
