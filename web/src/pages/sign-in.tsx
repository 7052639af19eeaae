// Sign-in: email and password, then a TOTP or recovery code when the account asks for one; the
// OpenID Connect button when the server has a provider configured.
import { useState } from 'preact/hooks';
import type { Session } from '../../../src/schemas/accounts';
import { ApiFailure, post, setCsrf } from '../api';
import { ErrorBox, Field, useAction, useGet, val } from '../ui';
import { signInFailureMessage } from '../../../src/accounts/sign-in-failures';

export function SignInPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const providers = useGet('/auth/providers');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needCode, setNeedCode] = useState(false);
  // Only a known reason, in the page's own words: a link cannot put text of its choosing here.
  const redirected = signInFailureMessage(new URLSearchParams(location.search).get('error'));
  const action = useAction(async () => {
    try {
      const s = await post('/auth/sign-in', { email, password, ...(needCode ? { code } : {}) });
      setCsrf(s.csrf_token);
      onSignedIn(s);
    } catch (e) {
      if (e instanceof ApiFailure && e.code === 'totp_required') {
        setNeedCode(true);
        setTimeout(() => document.getElementById('code')?.focus());
        return;
      }
      throw e;
    }
  });
  document.title = 'Sign in · Posthorn';
  return (
    <div class="auth-page">
      <main class="auth-card" id="main">
        <div class="brand big">
          <img src="/dashboard/assets/icon.svg" alt="" width="32" height="32" />
          <span>Posthorn</span>
        </div>
        <h1>Sign in</h1>
        <p class="muted">to your Posthorn dashboard</p>
        <ErrorBox error={action.error ?? (redirected ? { message: redirected } : null)} />
        <form
          onSubmit={(e) => {
            e.preventDefault();
            action.run();
          }}
        >
          {!needCode ? (
            <>
              <Field id="email" label="Email">
                <input
                  id="email"
                  type="email"
                  autoComplete="username"
                  required
                  value={email}
                  onInput={(e) => setEmail(val(e))}
                  // biome-ignore lint/a11y/noAutofocus: the page is this one form; its first field has the focus when the page opens, not moved there during use.
                  autoFocus
                />
              </Field>
              <Field id="password" label="Password">
                <input id="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(val(e))} />
              </Field>
            </>
          ) : (
            <Field id="code" label="Authentication code" hint="The 6-digit code from your authenticator app, or one of your recovery codes.">
              <input
                id="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                value={code}
                onInput={(e) => setCode(val(e))}
                aria-describedby="code-hint"
              />
            </Field>
          )}
          <button class="btn primary block" type="submit" disabled={action.busy}>
            {action.busy ? 'Signing in…' : needCode ? 'Verify' : 'Sign in'}
          </button>
        </form>
        {!needCode && (
          <p class="small center">
            <a href="/dashboard/forgot-password">Forgot your password?</a>
          </p>
        )}
        {providers.data?.oidc && !needCode && (
          <>
            <div class="divider">
              <span>or</span>
            </div>
            <a class="btn block" href={providers.data.oidc.start_url}>
              Sign in with {providers.data.oidc.name}
            </a>
          </>
        )}
        <p class="muted small center">
          The first admin's email and password are printed by <code>posthorn init</code>.
        </p>
      </main>
    </div>
  );
}
