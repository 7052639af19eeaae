// Everything the dashboard's sign-in needs, made once by the composition root.
import type { Config } from '../config';
import type { Store } from '../store';
import { Sessions } from './sessions';
import { SignIn } from './signin';
import { Members } from './members';
import { OidcSignIn } from './oidc';

export class Auth {
  readonly sessions: Sessions;
  readonly signIn: SignIn;
  readonly members: Members;
  readonly oidc: OidcSignIn;

  constructor(store: Store, config: Config) {
    this.sessions = new Sessions(store, { idleMs: config.auth.session_idle_timeout, lifetimeMs: config.auth.session_lifetime });
    this.signIn = new SignIn(store, this.sessions);
    this.members = new Members(store, config.public_url);
    this.oidc = new OidcSignIn(config.auth.oidc, config.public_url, store);
  }
}
