// The bounce classes' names (README.md, "Bounce classes and incidents"): vocabulary the rules
// (bounce-class.ts), the wire schemas and the dashboard share. Imports nothing: the dashboard's
// types reach it through src/schemas/.

/** The classes, in the order documented (docs and other tools depend on these names). */
export const BOUNCE_CLASSES = ['recipient', 'mailbox_full', 'message', 'reputation', 'authentication', 'policy', 'rate', 'routing', 'unknown'] as const;
export type BounceClass = (typeof BOUNCE_CLASSES)[number];

/** Classes that speak of the sender rather than the recipient: each is an incident of the sender. */
export const SENDER_CLASSES: readonly BounceClass[] = ['reputation', 'authentication'];
