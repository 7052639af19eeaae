// Everything the dashboard's sign-in needs, made once by the composition root.
import type { Config } from '../config';
import type { Store } from '../store';
import { Sessions } from './sessions';
import { SignIn } from './signin';
import { Members } from './members';
import { OidcSignIn } from './oidc';
import { AuditLog } from './audit';
import { TeamSwitches } from './switches';

export class Auth {
  readonly sessions: Sessions;
  readonly signIn: SignIn;
  readonly members: Members;
  readonly oidc: OidcSignIn;
  readonly audit: AuditLog;
  readonly switches: TeamSwitches;

  constructor(store: Store, config: Config) {
    this.sessions = new Sessions(store, { idleMs: config.auth.session_idle_timeout, lifetimeMs: config.auth.session_lifetime });
    this.oidc = new OidcSignIn(config.auth.oidc, config.public_url, store);
    this.switches = new TeamSwitches(store, () => this.oidc.enabled);
    this.signIn = new SignIn(store, this.sessions, this.switches);
    this.members = new Members(store, config.public_url);
    this.audit = new AuditLog(store);
  }
}
