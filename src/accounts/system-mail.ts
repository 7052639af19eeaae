// Mail Posthorn sends dashboard users itself (README "Mail Posthorn sends itself", docs/api.md
// §19.16): invitations, password resets, confirmations of a new address. What each says is here;
// how it is sent is the sending core's (sending/system.ts, made by the composition root), so this
// mail is queued, delivered, retried, logged and suppressed like any other.
const escapeHTML = Bun.escapeHTML;

export { SYSTEM_TAG } from '../mail/system';

export type SystemMailKind = 'invite' | 'password_reset' | 'email_change';

export interface SystemMessage {
  kind: SystemMailKind;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends system mail. Resolves true once the email is accepted (committed); false when no team can send from `auth.system_from`. */
export interface SystemMail {
  /** The sender's address, for messages that name it. */
  readonly from: string;
  send(message: SystemMessage): Promise<boolean>;
}

/** A mailer that sends nothing (the command line, tests of parts without a server). */
export const NO_SYSTEM_MAIL: SystemMail = { from: '', send: async () => false };

/** One message: a few lines and one link, as plain text and as minimal HTML. */
function message(kind: SystemMailKind, to: string, subject: string, lines: string[], link: { url: string; label: string }, after: string[]): SystemMessage {
  const text = [...lines, '', link.url, '', ...after, ''].join('\n');
  const p = (l: string) => `<p style="margin:0 0 16px;font:15px/1.5 -apple-system,Segoe UI,Roboto,sans-serif;color:#1f2328">${escapeHTML(l)}</p>`;
  const html = [
    '<!doctype html><html><body style="margin:0;padding:24px;background:#ffffff">',
    ...lines.map(p),
    `<p style="margin:0 0 16px"><a href="${escapeHTML(link.url)}" style="display:inline-block;padding:10px 16px;background:#1f6feb;color:#ffffff;border-radius:6px;text-decoration:none;font:600 15px -apple-system,Segoe UI,Roboto,sans-serif">${escapeHTML(link.label)}</a></p>`,
    p(`Or open this address: ${link.url}`),
    ...after.map(p),
    '</body></html>',
  ].join('');
  return { kind, to, subject, text, html };
}

export const inviteMessage = (to: string, team: string, role: string, url: string, days: number): SystemMessage =>
  message(
    'invite',
    to,
    `You are invited to ${team} on Posthorn`,
    [`You are invited to join the team ${team} on Posthorn as ${role === 'admin' || role === 'owner' ? 'an' : 'a'} ${role}.`, 'Choose a password to join:'],
    { url, label: 'Join the team' },
    [`The link works once, for ${days} days. If you did not expect this, ignore this email.`],
  );

export const passwordResetMessage = (to: string, url: string, minutes: number): SystemMessage =>
  message(
    'password_reset',
    to,
    'Choose a new Posthorn password',
    ['Someone asked to reset the password of your Posthorn account. Choose a new one here:'],
    { url, label: 'Choose a new password' },
    [`The link works once, for ${minutes} minutes. If you did not ask, ignore this email: your password stays as it is.`],
  );

export const emailChangeMessage = (to: string, url: string, hours: number): SystemMessage =>
  message(
    'email_change',
    to,
    'Confirm your new Posthorn address',
    ['Confirm that your Posthorn account should use this address from now on:'],
    { url, label: 'Confirm this address' },
    [`The link works once, for ${hours} hours. If you did not ask, ignore this email: nothing changes.`],
  );
