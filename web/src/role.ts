// The signed-in user's role (GET /auth/session), for hiding or disabling what it cannot do. The
// server decides (each route's least role, docs/api.md §19.4); the dashboard only mirrors it.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role } from '../../src/schemas/accounts';

/** Least first, as docs/api.md §19.4 orders them (the server's accounts/roles.ts). */
const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export const atLeast = (have: Role, need: Role): boolean => RANK[have] >= RANK[need];

/** The roles one may give: up to one's own. */
export const givable = (have: Role): Role[] => (Object.keys(RANK) as Role[]).filter((r) => atLeast(have, r));

export const RoleContext = createContext<Role>('viewer');

/** Whether the signed-in user's role includes `need`. */
export function useCan(need: Role): boolean {
  return atLeast(useContext(RoleContext), need);
}
