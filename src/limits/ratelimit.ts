// The team request limit (`limits.requests_per_second`, docs/api.md §6): a fixed 1-second window,
// no burst, shared by every key of a team and by both ways in — HTTP requests and SMTP
// submissions take from one instance, made by the composition root (src/services.ts). In memory:
// a window is one second, so nothing is worth persisting. In cluster mode each node admits its
// share — the limit divided by the nodes alive (`shareAmong`, kept up to date by the scheduler) —
// so that a load balancer spreading requests evenly keeps the team to the limit overall, without a
// database round trip per request (README.md, "Cluster mode").
export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private limit!: number;

  /** The headers that only change with the limit, written once for every request. */
  private text!: { limit: string; policy: string };

  constructor(
    private readonly configured: number,
    private readonly now: () => number = Date.now,
  ) {
    this.setLimit(configured);
  }

  /** `nodes` processes share the limit: this one admits its part of it (at least 1 a second). */
  shareAmong(nodes: number): void {
    this.setLimit(Math.max(1, Math.ceil(this.configured / Math.max(1, nodes))));
  }

  private setLimit(limit: number): void {
    this.limit = limit;
    this.text = { limit: String(limit), policy: `${limit};w=1` };
  }

  /** Count one request of `team` and decide on it. */
  take(team: string, now = this.now()): RateDecision {
    return this.decide(team, now, true);
  }

  /** The team's current window, without counting a request. */
  peek(team: string, now = this.now()): RateDecision {
    return this.decide(team, now, false);
  }

  private decide(team: string, now: number, count: boolean): RateDecision {
    const windowStart = now - (now % 1000);
    let w = this.windows.get(team);
    if (!w || w.start !== windowStart) {
      w = { start: windowStart, count: 0 };
      this.windows.set(team, w);
      if (this.windows.size > 10_000) this.prune(windowStart);
    }
    const allowed = w.count < this.limit;
    if (allowed && count) w.count++;
    const reset = Math.max(1, Math.ceil((windowStart + 1000 - now) / 1000));
    const headers: Record<string, string> = {
      'ratelimit-limit': this.text.limit,
      'ratelimit-remaining': String(Math.max(0, this.limit - w.count)),
      'ratelimit-reset': String(reset),
      'ratelimit-policy': this.text.policy,
    };
    if (!allowed && count) headers['retry-after'] = String(reset);
    return { allowed, headers };
  }

  private prune(current: number) {
    for (const [team, w] of this.windows) if (w.start !== current) this.windows.delete(team);
  }
}
