// Provisioning a team: the team, its admin user (dashboard login) and a first full_access key.
// Used by the first `serve` on an empty data dir and by `posthorn init` (README, "First email in five minutes").
import type { Store, TeamRec, UserRec } from '../store';
import { newId, nowIso, randomAlnum } from '../ids';
import { COMMAND_LINE, createApiKey } from './api-keys';

export interface Credentials {
  api_key: string;
  team_id: string;
  admin_email: string;
  admin_password: string;
}

export async function createTeam(store: Store, opts: { name?: string; adminEmail?: string } = {}): Promise<Credentials> {
  const teamId = newId();
  const team: TeamRec = { id: teamId, team_id: teamId, created_at: nowIso(), name: opts.name ?? 'Default team' };
  const password = randomAlnum(20);
  // Admin emails are unique across the install: number extra teams' defaults.
  let adminEmail = opts.adminEmail ?? 'admin@posthorn.local';
  if (!opts.adminEmail) for (let n = 2; await store.users.find('email', adminEmail.toLowerCase()); n++) adminEmail = `admin${n}@posthorn.local`;
  if (await store.users.find('email', adminEmail.toLowerCase())) throw new Error(`a user ${adminEmail} exists already`);
  const user: UserRec = {
    id: newId(),
    team_id: teamId,
    created_at: nowIso(),
    email: adminEmail,
    password_hash: await Bun.password.hash(password),
    role: 'owner',
  };
  await store.write(async (tx) => {
    tx.teams.put(team);
    tx.users.put(user);
  });
  const { token } = await createApiKey(store, teamId, { name: 'Default key', permission: 'full_access' }, COMMAND_LINE);
  return { api_key: token, team_id: teamId, admin_email: adminEmail, admin_password: password };
}
