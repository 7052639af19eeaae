// Accepting an invitation: the link's token names the team and email; the new member picks a password.
import { useState } from 'preact/hooks';
import type { Session } from '../../../src/schemas/accounts';
import { post, setCsrf, url } from '../api';
import { navigate } from '../router';
import { Form, Loading, NewPasswordFields, useAction, useGet } from '../ui';

export function InvitePage({ token, onSignedIn }: { token: string; onSignedIn: (s: Session) => void }) {
  const invite = useGet(url('/auth/invites/:token', { token }));
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const action = useAction(async () => {
    if (password !== again) throw new Error('The two passwords differ.');
    const s = await post(url('/auth/invites/:token/accept', { token }), { password });
    setCsrf(s.csrf_token);
    onSignedIn(s);
    navigate('/dashboard', { replace: true });
  });
  document.title = 'Join a team · Posthorn';
  return (
    <div class="auth-page">
      <main class="auth-card" id="main">
        <div class="brand big">
          <img src="/dashboard/assets/icon.svg" alt="" width="32" height="32" />
          <span>Posthorn</span>
        </div>
        {invite.loading && <Loading />}
        {invite.error && (
          <>
            <h1>Invitation not found</h1>
            <p class="muted">This link has expired or was already used. Ask a team owner for a new one.</p>
          </>
        )}
        {invite.data && (
          <>
            <h1>Join {invite.data.team}</h1>
            <p class="muted">
              You were invited as <strong>{invite.data.email}</strong> ({invite.data.role}). Choose a password to finish.
            </p>
            <Form action={action}>
              <NewPasswordFields label="Password" password={password} setPassword={setPassword} again={again} setAgain={setAgain} />
              <button class="btn primary block" type="submit" disabled={action.busy}>
                Join the team
              </button>
            </Form>
          </>
        )}
      </main>
    </div>
  );
}
