// The team requires two-factor sign-in and this user has not set it up (docs/api.md §19.4): until
// they do, the server answers their session's requests with 403 `totp_enrolment_required`, so the
// dashboard shows this page instead of the shell — the enrolment, and a way out.
import type { Session } from '../../../src/schemas/accounts';
import { TwoFactor } from './settings';

export function EnrolTotpPage({ session, onDone, onSignOut }: { session: Session; onDone: () => void; onSignOut: () => void }) {
  document.title = 'Set up two-factor sign-in · Posthorn';
  return (
    <div class="auth-page">
      <main class="auth-card wide" id="main">
        <div class="brand big">
          <img src="/dashboard/assets/icon.svg" alt="" width="32" height="32" />
          <span>Posthorn</span>
        </div>
        <h1>Set up two-factor sign-in</h1>
        <p class="muted">
          {session.team.name} requires a code from an authenticator app at every sign-in. Set it up to continue ({session.user.email}).
        </p>
        <TwoFactor enabled={false} onSaved={onDone} />
        <p class="center">
          <button type="button" class="btn ghost small" onClick={onSignOut}>
            Sign out
          </button>
        </p>
      </main>
    </div>
  );
}
