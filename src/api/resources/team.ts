// Team members and invitations (docs/api.md §19.4): listed by anyone of the team, managed by an
// owner (or a full_access API key, which already holds the team's keys).
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId } from '../platform/params';
import { inviteView, memberView, onlyOwner } from '../../accounts/members';

const tags = ['Team'];

export function teamRoutes(app: App, { auth }: ApiContext) {
  const { members } = auth;

  app.get('/team/members', async ({ request }) => ({ object: 'list', has_more: false, data: (await members.list(caller(request).team)).map(memberView) }), {
    detail: { summary: 'List team members', tags },
  });

  app.delete(
    '/team/members/:id',
    async ({ request, params }) => {
      const { team, user } = caller(request);
      onlyOwner(user ?? null);
      const id = pathId(params.id);
      await members.remove(team, id);
      return { object: 'member', id, deleted: true };
    },
    { detail: { summary: 'Remove a member (ends their sessions)', tags } },
  );

  app.get('/team/invites', async ({ request }) => ({ object: 'list', has_more: false, data: (await members.pending(caller(request).team)).map(inviteView) }), {
    detail: { summary: 'List pending invitations', tags },
  });

  app.post(
    '/team/invites',
    async ({ request, body, set }) => {
      const { team, user } = caller(request);
      onlyOwner(user ?? null);
      set.status = 201;
      return members.invite(team, user ?? null, body);
    },
    {
      body: t.Object({ email: t.Optional(t.Unknown()), role: t.Optional(t.Unknown()) }),
      detail: { summary: 'Invite a user by email: returns the invitation link (valid 7 days)', tags },
    },
  );

  app.delete(
    '/team/invites/:id',
    async ({ request, params }) => {
      const { team, user } = caller(request);
      onlyOwner(user ?? null);
      const id = pathId(params.id);
      await members.revokeInvite(team, id);
      return { object: 'invite', id, deleted: true };
    },
    { detail: { summary: 'Withdraw an invitation', tags } },
  );
}
