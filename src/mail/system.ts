// Posthorn's own mail to dashboard users (accounts/system-mail.ts) is marked by one tag. Its links
// are secrets of the person it is for (a password reset, an invitation), so no route shows its
// content to the team that sent it: the email's record, status and events stay visible, its body
// does not (README "Mail Posthorn sends itself").

/** The tag every system email carries; its value is the kind (`invite`, `password_reset`, `email_change`). */
export const SYSTEM_TAG = 'posthorn_system';

/** What GET /emails/{id} says in place of a system email's text. */
export const SYSTEM_CONTENT_HIDDEN = 'Sent by Posthorn to a dashboard user: its content holds a single-use link and is not shown.';

export const isSystemMail = (email: { tags: { name: string }[] }): boolean => email.tags.some((t) => t.name === SYSTEM_TAG);
