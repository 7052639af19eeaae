// Dashboard sign-in, sessions, second factor and team members on the wire (docs/api.md §19).
import { Type } from '@sinclair/typebox';
import { Id, Timestamp, type Static } from './common';

/** A member's role, least first (docs/api.md §19.4). */
const roles = () => [Type.Literal('viewer'), Type.Literal('member'), Type.Literal('admin'), Type.Literal('owner')];
export const Role = Type.Union(roles());
export type Role = Static<typeof Role>;

/** A role a request asks for. */
export const RoleField = Type.Union(roles(), { error: 'Invalid `role` field: use "owner", "admin", "member" or "viewer".' });

export const Member = Type.Object({
  object: Type.Literal('member'),
  id: Id,
  email: Type.String(),
  role: Role,
  totp_enabled: Type.Boolean(),
  created_at: Timestamp,
});
export type Member = Static<typeof Member>;

export const Invite = Type.Object({ object: Type.Literal('invite'), id: Id, email: Type.String(), role: Role, created_at: Timestamp, expires_at: Timestamp });
export type Invite = Static<typeof Invite>;

/** A new invitation, with the link to send (valid 7 days). */
export const InviteCreated = Type.Composite([
  Invite,
  Type.Object({
    url: Type.String(),
    /** Posthorn mailed the link to the invited address itself (docs/api.md §19.16); else pass the link on. */
    mailed: Type.Boolean(),
  }),
]);

export const InviteRequest = Type.Object({
  // An address that is not a string reads as missing, as an empty one does (src/accounts/members.ts).
  email: Type.String({ error: 'Missing `email` field.', errorName: 'missing_required_field' }),
  role: Type.Optional(RoleField),
});
export type InviteRequest = Static<typeof InviteRequest>;

/** PATCH /team/members/{id}: a member's new role. */
export const MemberUpdate = Type.Object({ role: RoleField });

/** A team's settings (docs/api.md §19.4): its name and its sign-in switches. */
export const TeamSettings = Type.Object({
  object: Type.Literal('team'),
  id: Id,
  name: Type.String(),
  /** Every member must use a second factor (TOTP) before the dashboard lets them work. */
  require_totp: Type.Boolean(),
  /** Members sign in with OpenID Connect only (when it is configured). */
  require_oidc: Type.Boolean(),
  /** Whether OpenID Connect is configured on this server (`auth.oidc.issuer`). */
  oidc_available: Type.Boolean(),
});
export type TeamSettings = Static<typeof TeamSettings>;

export const TeamSettingsUpdate = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, error: 'The `name` field must be a string of 1 to 100 characters.' })),
  require_totp: Type.Optional(Type.Boolean({ error: 'The `require_totp` field must be a boolean.' })),
  require_oidc: Type.Optional(Type.Boolean({ error: 'The `require_oidc` field must be a boolean.' })),
});
export type TeamSettingsUpdate = Static<typeof TeamSettingsUpdate>;

export const MemberList = Type.Object({ object: Type.Literal('list'), has_more: Type.Literal(false), data: Type.Array(Member) });
export const InviteList = Type.Object({ object: Type.Literal('list'), has_more: Type.Literal(false), data: Type.Array(Invite) });

/** How one can sign in: a password always, OpenID Connect when configured. */
export const Providers = Type.Object({
  object: Type.Literal('providers'),
  password: Type.Literal(true),
  oidc: Type.Union([Type.Object({ name: Type.Union([Type.String(), Type.Null()]), start_url: Type.String() }), Type.Null()]),
});

/** The signed-in session: its user and team, and the CSRF token the page sends back. */
export const Session = Type.Object({
  object: Type.Literal('session'),
  id: Id,
  user: Member,
  team: Type.Object({
    id: Id,
    name: Type.String(),
    /** Posthorn: the team's sign-in switches (§19.4), so the dashboard can lead a member to enrol a second factor. */
    require_totp: Type.Boolean(),
    require_oidc: Type.Boolean(),
  }),
  csrf_token: Type.String(),
  expires_at: Timestamp,
});
export type Session = Static<typeof Session>;

export const SignInRequest = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254, error: 'The `email` field must be an email address.' }),
  password: Type.String({ minLength: 1, maxLength: 200, error: 'The `password` field must be a string.' }),
  code: Type.Optional(Type.String({ maxLength: 40, error: 'The `code` field must be a string.' })),
});

/** One of the user's sessions (a browser signed in). */
export const SessionItem = Type.Object({
  object: Type.Literal('session'),
  id: Id,
  created_at: Timestamp,
  last_seen_at: Timestamp,
  expires_at: Timestamp,
  user_agent: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  method: Type.Union([Type.Literal('password'), Type.Literal('oidc'), Type.Literal('invite')]),
  current: Type.Boolean(),
});
export type SessionItem = Static<typeof SessionItem>;
export const SessionList = Type.Object({ object: Type.Literal('list'), has_more: Type.Literal(false), data: Type.Array(SessionItem) });

export const SessionsEnded = Type.Object({ object: Type.Literal('list'), deleted: Type.Integer() });

/** An invitation as its link shows it, before it is accepted. */
export const InviteByToken = Type.Object({ object: Type.Literal('invite'), email: Type.String(), role: Role, team: Type.String(), expires_at: Timestamp });

export const AcceptInviteRequest = Type.Object({
  // A password that is not a string reads as missing (its rules are src/accounts/signin.ts checkPassword's).
  password: Type.String({ error: 'Missing `password` field.', errorName: 'missing_required_field' }),
});

export const PasswordRequest = Type.Object({
  current_password: Type.String({ maxLength: 200, error: 'The `current_password` field must be a string.' }),
  new_password: Type.String({ maxLength: 200, error: 'The `new_password` field must be a string.' }),
});
export const PasswordChanged = Type.Object({ object: Type.Literal('user'), id: Id, password_changed: Type.Literal(true) });

export const TotpEnrolment = Type.Object({ object: Type.Literal('totp_enrolment'), secret: Type.String(), uri: Type.String(), qr_svg: Type.String() });
export type TotpEnrolment = Static<typeof TotpEnrolment>;
export const TotpConfirmRequest = Type.Object({ code: Type.String({ maxLength: 12, error: 'The `code` field must be the 6-digit code.' }) });
export const TotpEnabled = Type.Object({ object: Type.Literal('totp'), enabled: Type.Literal(true), recovery_codes: Type.Array(Type.String()) });
export const TotpDisableRequest = Type.Object({ password: Type.String({ maxLength: 200, error: 'The `password` field must be a string.' }) });
export const TotpDisabled = Type.Object({ object: Type.Literal('totp'), enabled: Type.Literal(false) });

/** POST /auth/password-reset: mail a link to choose a new password (docs/api.md §19.16). */
export const PasswordResetRequest = Type.Object({
  email: Type.String({ maxLength: 320, error: 'Missing `email` field.', errorName: 'missing_required_field' }),
});
/** The same answer whether an account has the address or not. */
export const PasswordResetRequested = Type.Object({ object: Type.Literal('password_reset'), requested: Type.Literal(true) });
/** POST /auth/password-reset/{token}: the new password. */
export const PasswordResetConfirm = Type.Object({
  password: Type.String({ maxLength: 200, error: 'Missing `password` field.', errorName: 'missing_required_field' }),
});

/** POST /auth/email: a new address for the signed-in user, confirmed by a link mailed to it. */
export const EmailChangeRequest = Type.Object({
  email: Type.String({ maxLength: 320, error: 'Missing `email` field.', errorName: 'missing_required_field' }),
  password: Type.String({ maxLength: 200, error: 'The `password` field must be a string.' }),
});
export const EmailChangeRequested = Type.Object({ object: Type.Literal('email_change'), email: Type.String(), expires_at: Timestamp });
export const EmailChanged = Type.Object({ object: Type.Literal('user'), id: Id, email: Type.String() });

/** GET /smtp-settings: how to send through Posthorn's SMTP submission (docs/api.md §19.16). */
export const SmtpSettings = Type.Object({
  object: Type.Literal('smtp_settings'),
  host: Type.String(),
  /** Implicit TLS ports (RFC 8314), then STARTTLS ports (RFC 6409). */
  tls_ports: Type.Array(Type.Integer()),
  starttls_ports: Type.Array(Type.Integer()),
  username: Type.String(),
  /** What the password is: an API key of the team. */
  password: Type.String(),
});
