// Outbound delivery (docs/mail.md §3): the durable queue's worker, MX resolution, connection pool,
// DKIM signing, retries, bounce classification and relay mode.
export { DeliveryEngine, type DeliveryDeps, type EngineOptions } from './engine';
