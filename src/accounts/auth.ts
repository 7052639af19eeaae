// Everything the dashboard's sign-in needs, made once by the composition root.
import type { Config } from '../config';
import type { Store } from '../store';
import { Sessions } from './sessions';
import { SignIn } from './signin';
import { Members } from './members';
import { OidcSignIn } from './oidc';
import { AuditLog } from './audit';
import { TeamSwitches } from './switches';
import { AccountMail } from './account-mail';
import { NO_SYSTEM_MAIL, type SystemMail } from './system-mail';

export class Auth {
  readonly sessions: Sessions;
  readonly signIn: SignIn;
  readonly members: Members;
  readonly oidc: OidcSignIn;
  readonly audit: AuditLog;
  readonly switches: TeamSwitches;
  /** Password resets and address changes confirmed by mail. */
  readonly accountMail: AccountMail;
  /** Posthorn's own mail to users (sending/system.ts; the composition root's). */
  readonly mail: SystemMail;

  constructor(store: Store, config: Config, mail: SystemMail = NO_SYSTEM_MAIL) {
    this.mail = mail;
    this.sessions = new Sessions(store, { idleMs: config.auth.session_idle_timeout, lifetimeMs: config.auth.session_lifetime });
    this.oidc = new OidcSignIn(config.auth.oidc, config.public_url, store);
    this.switches = new TeamSwitches(store, () => this.oidc.enabled);
    this.signIn = new SignIn(store, this.sessions, this.switches);
    this.members = new Members(store, config.public_url, mail);
    this.accountMail = new AccountMail(store, mail, config.public_url, this.sessions, this.signIn);
    this.audit = new AuditLog(store);
  }
}
