// A team's sign-in switches (docs/api.md §19.4): "require TOTP" — a member who signs in with a
// password must have a second factor before the dashboard lets them work — and "require OpenID
// Connect" — members sign in through the provider only (when one is configured). They hold at
// sign-in and on every request of a session (api/server.ts), so a switch turned on applies to
// sessions already open. A session the TOTP switch holds back may still do what enrolling needs:
// the routes of the user's own account (`access: 'session'`) and GET /auth/session. API keys are
// not sessions: an owner's key can turn a switch off again (README "Security").
import type { Store, TeamRec } from '../store';
import type { SignedIn } from './sessions';
import { ApiError } from '../errors';
import { totpEnabled } from './totp';

export const switchErrors = {
  oidcRequired: () => new ApiError(403, 'oidc_required', 'Your team signs in with its OpenID Connect provider only: sign in with it on the sign-in page.'),
  totpRequired: () =>
    new ApiError(
      403,
      'totp_enrolment_required',
      'Your team requires two-factor sign-in: set up an authenticator app (Settings → Security) before you continue.',
    ),
};

export class TeamSwitches {
  constructor(
    private readonly store: Store,
    private readonly oidcEnabled: () => boolean,
  ) {}

  team(id: string): Promise<TeamRec | undefined> {
    return this.store.teams.get(id, id);
  }

  /** Whether the team's switches refuse a password sign-in outright (the OIDC switch). */
  refusesPassword(team: TeamRec | undefined): boolean {
    return !!team?.require_oidc && this.oidcEnabled();
  }

  /** What the switches refuse to a signed-in session on the team's routes, or null. */
  async refusal(s: SignedIn): Promise<ApiError | null> {
    const team = await this.team(s.user.team_id);
    // The provider's sign-in stands in for the password and its second factor (§19.3).
    if (s.session.method === 'oidc') return null;
    if (this.refusesPassword(team)) return switchErrors.oidcRequired();
    if (team?.require_totp && !totpEnabled(s.user)) return switchErrors.totpRequired();
    return null;
  }
}
