// Invitations do not tell a team which addresses have accounts in other teams (issue 34, finding 8;
// docs/api.md §19.4): inviting such an address answers as inviting a new one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn();
});
afterAll(() => p.stop());

/** An invite's answer with what differs between any two invites (ids, times, the link's token) blanked. */
const shapeOf = (r: { status: number; body: Record<string, unknown> }) => ({
  status: r.status,
  keys: Object.keys(r.body).sort(),
  object: r.body.object,
  role: r.body.role,
  url: typeof r.body.url === 'string' && /\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/.test(r.body.url),
});

describe('POST /team/invites', () => {
  test('an address with an account in another team answers exactly as a new address', async () => {
    const other = await p.newTeam();
    const taken = await p.api('POST', '/team/invites', { body: { email: other.admin_email } });
    const fresh = await p.api('POST', '/team/invites', { body: { email: 'nobody-yet@dest.test' } });
    expect(shapeOf(taken)).toEqual(shapeOf(fresh));
    expect(shapeOf(fresh)).toMatchObject({ status: 201, object: 'invite', role: 'member', url: true });
    expect(taken.body.email).toBe(other.admin_email);
  });

  test("a member of the team's own: 422, which tells the team nothing it cannot see", async () => {
    const r = await p.api('POST', '/team/invites', { body: { email: p.creds.admin_email } });
    expect([r.status, r.body.message]).toEqual([422, `${p.creds.admin_email} is already a member of this team.`]);
  });
});
