// Inbound mail after the 250 (docs/mail.md §4–5): the spool's processor, and what it stores.
export { InboundProcessor, type InboundDeps } from './processor';
