// Team members and invitations (docs/api.md §19.4): listed by anyone of the team, managed by an
// owner (or a full_access API key, which already holds the team's keys).
import type { ApiContext } from '../app';
import { inviteView, memberView, onlyOwner } from '../../accounts/members';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, UuidParams } from '../../schemas/common';
import { InviteCreated, InviteList, InviteRequest, MemberList } from '../../schemas/accounts';

const Params = UuidParams('id');

export const teamResource = resource('Team', ({ auth }: ApiContext) => {
  const { members } = auth;
  return [
    route({
      method: 'GET',
      path: '/team/members',
      summary: 'List team members',
      access: 'team',
      body: 'none',
      response: MemberList,
      handler: async ({ caller }) => ({ object: 'list' as const, has_more: false as const, data: (await members.list(caller.team)).map(memberView) }),
    }),
    route({
      method: 'DELETE',
      path: '/team/members/:id',
      summary: 'Remove a member (ends their sessions)',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Deleted('member'),
      async handler({ caller, params }) {
        onlyOwner(caller.user ?? null);
        await members.remove(caller.team, params.id);
        return { object: 'member' as const, id: params.id, deleted: true as const };
      },
    }),
    route({
      method: 'GET',
      path: '/team/invites',
      summary: 'List pending invitations',
      access: 'team',
      body: 'none',
      response: InviteList,
      handler: async ({ caller }) => ({ object: 'list' as const, has_more: false as const, data: (await members.pending(caller.team)).map(inviteView) }),
    }),
    route({
      method: 'POST',
      path: '/team/invites',
      summary: 'Invite a user by email: returns the invitation link (valid 7 days)',
      access: 'team',
      body: InviteRequest,
      status: 201,
      response: InviteCreated,
      async handler({ caller, body }) {
        onlyOwner(caller.user ?? null);
        return members.invite(caller.team, caller.user ?? null, body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/team/invites/:id',
      summary: 'Withdraw an invitation',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Deleted('invite'),
      async handler({ caller, params }) {
        onlyOwner(caller.user ?? null);
        await members.revokeInvite(caller.team, params.id);
        return { object: 'invite' as const, id: params.id, deleted: true as const };
      },
    }),
  ];
});
