// Where an attempt's connections go once its MX hosts are known (docs/ARCHITECTURE.md §4, step 10;
// attempt.ts asks through AttemptDeps.route): the site they show — which may not be the one the
// claim assumed, since a domain rolls up to a provider by its MX (shaping.ts) — and the connection
// lease of that site, or a wait when that site has no room now.
import type { Route } from './attempt';
import type { SitesInFlight } from './in-flight';
import type { Shaper } from './shaping';

export function routeAttempt(shaper: Shaper, flying: SitesInFlight, key: string, domain: string, hosts: string[], now: number): Route {
  const site = shaper.siteOfRoute(domain, hosts);
  if (site !== flying.get(key)) {
    // Another site than the claim counted it under: it needs room there too.
    flying.set(key, site);
    const r = shaper.room(site, now, flying.others(site, key));
    if (r.n <= 0) return { site, defer: r.until ?? now + Math.max(1_000, shaper.waitFor(site, now)) };
    shaper.take(site, now);
  } else {
    // Suspended since the claim (another attempt's throttling reply).
    const until = shaper.suspended(site, now);
    if (until) return { site, defer: shaper.spread(site, until, now, 0) };
  }
  if (!shaper.enabled) return { site };
  const lim = shaper.limits(site, now);
  return { site, lease: { group: site, maxConnections: lim.max_connections, maxMessages: lim.messages_per_connection } };
}
