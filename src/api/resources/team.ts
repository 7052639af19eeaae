// The team (docs/api.md §19.4): its members and invitations, listed by anyone of the team and
// managed by an admin or owner — nobody gives a role above their own (accounts/members.ts) —,
// and its settings, the sign-in switches among them, changed by an owner.
import type { ApiContext } from '../app';
import { inviteView, memberView } from '../../accounts/members';
import { resource, route } from '../platform/route';
import { errors } from '../../errors';
import { Deleted, IgnoredBody, UuidParams } from '../../schemas/common';
import { InviteCreated, InviteList, InviteRequest, Member, MemberList, MemberUpdate, TeamSettings, TeamSettingsUpdate } from '../../schemas/accounts';
import type { TeamRec } from '../../store';
import type { KeysAffected } from '../../accounts/members';
import type { Caller } from '../platform/route';
import { clientIp } from '../platform/context';

const Params = UuidParams('id');

export const teamResource = resource('Team', ({ auth, store }: ApiContext) => {
  const { members } = auth;

  /**
   * The keys a member made follow their maker (README "Security"): each one revoked or lowered is
   * an entry of its own in the audit log, by whoever removed the member or changed their role.
   */
  async function auditKeys(caller: Caller, request: Request, member: string, affected: KeysAffected) {
    const actor = caller.user ? { user: caller.user } : { key: caller.key! };
    const ip = clientIp(request) || null;
    for (const id of affected.revoked)
      await auth.audit.record({ team: caller.team, action: 'api_key.revoked', actor, ip, targetId: id, details: { reason: 'maker_removed', maker: member } });
    for (const id of affected.lowered)
      await auth.audit.record({
        team: caller.team,
        action: 'api_key.role_lowered',
        actor,
        ip,
        targetId: id,
        details: { reason: 'maker_role_changed', maker: member },
      });
  }

  const settingsView = (t: TeamRec): TeamSettings => ({
    object: 'team',
    id: t.id,
    name: t.name,
    require_totp: !!t.require_totp,
    require_oidc: !!t.require_oidc,
    oidc_available: auth.oidc.enabled,
  });

  return [
    route({
      method: 'GET',
      path: '/team',
      summary: 'The team’s settings: its name and sign-in switches (Posthorn)',
      access: 'team',
      body: 'none',
      response: TeamSettings,
      async handler({ caller }) {
        const team = await store.teams.get(caller.team, caller.team);
        if (!team) throw errors.notFound('Team');
        return settingsView(team);
      },
    }),
    route({
      method: 'PATCH',
      path: '/team',
      summary: 'Change the team’s name or sign-in switches: require TOTP, require OpenID Connect (Posthorn)',
      access: 'team',
      role: 'owner',
      audit: 'team.settings_changed',
      body: TeamSettingsUpdate,
      response: TeamSettings,
      async handler({ caller, body }) {
        if (body.require_oidc && !auth.oidc.enabled)
          throw errors.validation('OpenID Connect sign-in is not configured on this server (auth.oidc.issuer), so it cannot be required.');
        const team = await store.write(async (tx) => {
          const cur = await tx.teams.get(caller.team, caller.team);
          if (!cur) throw errors.notFound('Team');
          const next: TeamRec = { ...cur };
          if (body.name !== undefined) next.name = body.name;
          if (body.require_totp !== undefined) next.require_totp = body.require_totp;
          if (body.require_oidc !== undefined) next.require_oidc = body.require_oidc;
          tx.teams.put(next);
          return next;
        });
        return settingsView(team);
      },
    }),
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
      method: 'PATCH',
      path: '/team/members/:id',
      summary: 'Change a member’s role; the API keys they made carry at most the new role (Posthorn)',
      access: 'team',
      role: 'admin',
      audit: 'member.role_changed',
      params: Params,
      body: MemberUpdate,
      response: Member,
      async handler({ caller, params, body, request }) {
        const { user, ...keys } = await members.setRole(caller.team, params.id, body.role, caller);
        await auditKeys(caller, request, params.id, keys);
        return memberView(user);
      },
    }),
    route({
      method: 'DELETE',
      path: '/team/members/:id',
      summary: 'Remove a member (ends their sessions, revokes the API keys they made)',
      access: 'team',
      role: 'admin',
      audit: 'member.removed',
      params: Params,
      body: IgnoredBody,
      response: Deleted('member'),
      async handler({ caller, params, request }) {
        await auditKeys(caller, request, params.id, await members.remove(caller.team, params.id, caller));
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
      role: 'admin',
      audit: 'member.invited',
      body: InviteRequest,
      status: 201,
      response: InviteCreated,
      handler: ({ caller, body }) => members.invite(caller.team, caller, body),
    }),
    route({
      method: 'DELETE',
      path: '/team/invites/:id',
      summary: 'Withdraw an invitation',
      access: 'team',
      role: 'admin',
      audit: 'member.invite_revoked',
      params: Params,
      body: IgnoredBody,
      response: Deleted('invite'),
      async handler({ caller, params }) {
        await members.revokeInvite(caller.team, params.id);
        return { object: 'invite' as const, id: params.id, deleted: true as const };
      },
    }),
  ];
});
