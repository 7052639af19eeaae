// Roles and the authority of API keys (docs/api.md §19.4, §10). Four roles, each able to do what
// the one before it can: a viewer reads, a member works (sends, edits content, makes keys of its
// own authority), an admin administers (members below owner, invitations), an owner owns (owners,
// the team's security switches). A key carries the authority of whoever made it: its `role` is its
// maker's role when it was made (or less, if asked), so a key made by a member can never do what
// the member cannot. What each route needs is declared with the route (api/platform/route.ts).
import type { ApiKeyRec, Role, StoredRole, UserRec } from '../store';
import { ApiError } from '../errors';

/** Least first. */
export const ROLES: readonly Role[] = ['viewer', 'member', 'admin', 'owner'];

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** Whether `have` includes `need`. */
export const atLeast = (have: Role, need: Role): boolean => RANK[have] >= RANK[need];

/** A user's role. `admin` is how stores made before 0.2 spell the owner; the admin role is stored as `team_admin`. */
export function roleOf(user: Pick<UserRec, 'role'>): Role {
  switch (user.role) {
    case 'team_admin':
      return 'admin';
    case 'member':
    case 'viewer':
      return user.role;
    default:
      return 'owner';
  }
}

/** How a user record stores a role. */
export const storedRole = (role: Role): StoredRole => (role === 'admin' ? 'team_admin' : role);

/** The most a key may do; keys made before roles held count as their team's owner's (README "Security"). */
export const keyRole = (key: Pick<ApiKeyRec, 'role'>): Role => key.role ?? 'owner';

/** Who is calling: a signed-in user (their role now) or an API key (its role). */
export interface Acting {
  key: ApiKeyRec | null;
  user?: UserRec;
}

export function actingRole(caller: Acting): Role {
  if (caller.user) return roleOf(caller.user);
  if (caller.key) return keyRole(caller.key);
  return 'viewer';
}

/** 403 restricted_role: the caller's role does not include `need`. */
export function roleRefused(caller: Acting, need: Role, what?: string): ApiError {
  const have = actingRole(caller);
  const who = caller.user ? `Your role is ${have}` : `This API key carries the ${have} role of whoever made it`;
  return new ApiError(403, 'restricted_role', `${what ?? 'This'} needs the ${need} role or higher. ${who}.`);
}

/** Refuse unless the caller's role includes `need`. */
export function requireRole(caller: Acting, need: Role, what?: string): void {
  if (!atLeast(actingRole(caller), need)) throw roleRefused(caller, need, what);
}
