// Team members (docs/api.md §19.4): an owner or admin invites a user by email; the invitation is
// a link valid 7 days, mailed to the address by Posthorn itself (system-mail.ts, when it can send
// from `auth.system_from`) and shown to whoever invited, and whoever opens it chooses a password
// and joins with the invited role.
// Emails are unique across the install: one person is a member of one team. Nobody gives a role
// above their own, nor changes or removes a member whose role is above theirs (roles.ts).
import { randomBytes } from 'node:crypto';
import type { ApiKeyRec, InviteRec, Role, Store, Tx as StoreTx, UserRec } from '../store';
import { errors } from '../errors';
import { newId, nowIso, sha256hex } from '../ids';
import { parseEmail } from '../mail/address';
import { log } from '../log';
import { checkPassword } from './signin';
import { inviteMessage, type SystemMail } from './system-mail';
import type { Invite, InviteRequest, Member } from '../schemas/accounts';
import { type Acting, actingRole, atLeast, keyRole, roleOf, roleRefused, storedRole } from './roles';

/** What a member's removal or lower role did to the keys they made (README "Security"). */
export interface KeysAffected {
  revoked: string[];
  lowered: string[];
}

/**
 * The keys a user made, and the keys those keys made, and so on: a key carries its maker's
 * authority (roles.ts), so when the maker leaves or is given less, so do their keys.
 */
async function keysMadeBy(tx: StoreTx, team: string, userId: string): Promise<ApiKeyRec[]> {
  const all = await tx.apiKeys.all(team);
  const out: ApiKeyRec[] = [];
  const makers = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const k of all)
      if (!makers.has(k.id) && (k.made_by?.user_id === userId || (k.made_by?.key_id && makers.has(k.made_by.key_id)))) {
        makers.add(k.id);
        out.push(k);
        grew = true;
      }
  }
  return out;
}

export const INVITE_DAYS = 7;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export function memberView(u: UserRec): Member {
  return { object: 'member', id: u.id, email: u.email, role: roleOf(u), totp_enabled: !!u.totp?.enabled_at, created_at: u.created_at };
}

export function inviteView(i: InviteRec): Invite {
  return { object: 'invite', id: i.id, email: i.email, role: i.role, created_at: i.created_at, expires_at: new Date(i.expires_at).toISOString() };
}

/** Refuse unless the caller's role includes `role` (giving it, or acting on a member who has it). */
function mayHandle(caller: Acting, role: Role, what: string): void {
  if (!atLeast(actingRole(caller), role)) throw roleRefused(caller, role, what);
}

function checkEmail(text: string): string {
  if (!text.trim()) throw errors.missingField('email');
  const addr = parseEmail(text.trim());
  if (!addr) throw errors.invalidField('email', 'give a plain address such as ana@example.com.');
  return addr.address.toLowerCase();
}

export class Members {
  constructor(
    private readonly store: Store,
    private readonly publicUrl: string,
    private readonly mail: SystemMail,
  ) {}

  inviteUrl(token: string): string {
    return `${this.publicUrl}/dashboard/invite/${token}`;
  }

  async invite(team: string, by: Acting, body: InviteRequest) {
    const email = checkEmail(body.email);
    const role = body.role ?? 'member';
    mayHandle(by, role, `Inviting ${role === 'admin' || role === 'owner' ? 'an' : 'a'} ${role}`);
    // Whether an address has an account in another team is not this team's to learn (issue 34):
    // such an invite is made like any other, and its acceptance is what fails.
    const existing = await this.store.users.find('email', email);
    if (existing?.team_id === team) throw errors.validation(`${email} is already a member of this team.`);
    const token = randomBytes(32).toString('base64url');
    const now = Date.now();
    const invite: InviteRec = {
      id: newId(),
      team_id: team,
      created_at: new Date(now).toISOString(),
      email,
      role,
      token_hash: sha256hex(token),
      expires_at: now + INVITE_DAYS * 86_400_000,
      invited_by: by.user?.id ?? by.key?.id ?? 'api_key',
    };
    await this.store.write(async (tx) => {
      // A new invitation for the same address replaces the old one.
      for (const old of await tx.invites.all(team)) if (old.email === email) tx.invites.remove(team, old.id);
      tx.invites.put(invite);
    });
    const url = this.inviteUrl(token);
    const teamName = (await this.store.teams.get(team, team))?.name ?? 'Posthorn';
    const mailed = await this.mail.send(inviteMessage(email, teamName, role, url, INVITE_DAYS));
    log.info('team.invited', { team, email, role, mailed });
    return { ...inviteView(invite), url, mailed };
  }

  async pending(team: string, now = Date.now()): Promise<InviteRec[]> {
    return (await this.store.invites.all(team)).filter((i) => i.expires_at > now).reverse();
  }

  async revokeInvite(team: string, id: string): Promise<void> {
    const found = await this.store.write(async (tx) => {
      const i = await tx.invites.get(team, id);
      if (i) tx.invites.remove(team, id);
      return !!i;
    });
    if (!found) throw errors.notFound('Invite');
  }

  /** The live invitation a link's token stands for, with its team's name. */
  async lookup(token: string | null, now = Date.now()): Promise<{ invite: InviteRec; team: string }> {
    const invite = token !== null && TOKEN_RE.test(token) ? await this.store.invites.find('token', sha256hex(token)) : undefined;
    if (!invite || invite.expires_at <= now) throw errors.notFound('Invite');
    const team = await this.store.teams.get(invite.team_id, invite.team_id);
    return { invite, team: team?.name ?? 'Posthorn' };
  }

  /** Join the team: a user with the invited email, role and a chosen password. */
  async accept(token: string | null, password: string): Promise<UserRec> {
    checkPassword(password);
    const { invite } = await this.lookup(token);
    const user: UserRec = {
      id: newId(),
      team_id: invite.team_id,
      created_at: nowIso(),
      email: invite.email,
      password_hash: await Bun.password.hash(password),
      role: storedRole(invite.role),
    };
    await this.store.write(async (tx) => {
      const still = await tx.invites.get(invite.team_id, invite.id);
      if (!still) throw errors.notFound('Invite');
      if (await tx.users.find('email', invite.email)) throw errors.validation(`${invite.email} already has an account.`);
      tx.invites.remove(invite.team_id, invite.id);
      tx.users.put(user);
    });
    log.info('team.joined', { team: user.team_id, user: user.id, role: user.role });
    return user;
  }

  async list(team: string): Promise<UserRec[]> {
    return this.store.users.all(team);
  }

  /** Remove a member, end their sessions and revoke the keys they made; the last owner stays. */
  async remove(team: string, id: string, by: Acting): Promise<KeysAffected> {
    const revoked = await this.store.write(async (tx) => {
      const user = await tx.users.get(team, id);
      if (!user) throw errors.notFound('Member');
      mayHandle(by, roleOf(user), `Removing ${roleOf(user) === 'owner' ? 'an owner' : 'this member'}`);
      const owners = (await tx.users.all(team)).filter((u) => roleOf(u) === 'owner');
      if (roleOf(user) === 'owner' && owners.length === 1) throw errors.validation('A team keeps at least one owner.');
      for (const s of await tx.sessions.findAll('user', id, team)) tx.sessions.remove(team, s.id);
      const keys = await keysMadeBy(tx, team, id);
      for (const k of keys) tx.apiKeys.remove(team, k.id);
      tx.users.remove(team, id);
      return keys.map((k) => k.id);
    });
    log.info('team.member_removed', { team, user: id, keys_revoked: revoked.length });
    return { revoked, lowered: [] };
  }

  /**
   * Give a member another role (their sessions see it at once, and the keys they made carry at
   * most the new role); the last owner stays one.
   */
  async setRole(team: string, id: string, role: Role, by: Acting): Promise<{ user: UserRec } & KeysAffected> {
    const done = await this.store.write(async (tx) => {
      const cur = await tx.users.get(team, id);
      if (!cur) throw errors.notFound('Member');
      mayHandle(by, roleOf(cur), `Changing the role of ${roleOf(cur) === 'owner' ? 'an owner' : 'this member'}`);
      mayHandle(by, role, `Making someone ${role === 'admin' || role === 'owner' ? 'an' : 'a'} ${role}`);
      if (roleOf(cur) === 'owner' && role !== 'owner' && (await tx.users.all(team)).filter((u) => roleOf(u) === 'owner').length === 1)
        throw errors.validation('A team keeps at least one owner.');
      const next: UserRec = { ...cur, role: storedRole(role) };
      tx.users.put(next);
      const lowered: string[] = [];
      for (const k of await keysMadeBy(tx, team, id))
        if (!atLeast(role, keyRole(k))) {
          tx.apiKeys.put({ ...k, role });
          lowered.push(k.id);
        }
      return { user: next, revoked: [], lowered };
    });
    log.info('team.role_changed', { team, user: id, role, keys_lowered: done.lowered.length });
    return done;
  }
}
