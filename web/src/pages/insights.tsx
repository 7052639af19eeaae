// Deliverability insights as the email page and a broadcast's review show them (GET
// /emails/{id}/insights, POST /broadcasts/{id}/review): rspamd's score at the top, then each
// insight with its verdict, what was found and what to do — the spam score's with the rules that
// weigh most (README "Deliverability"). A score that could not be had is shown as `unavailable`
// with the reason, never as a number.
import type { Insight, SpamVerdict } from '../../../src/schemas/insights';
import { Badge } from '../ui';

const TITLES: Record<Insight['name'], string> = {
  link_domains: 'Links go to your own site',
  dmarc: 'DMARC policy',
  text_part: 'Plain-text part',
  no_reply: 'A sender that takes replies',
  html_size: 'HTML under 102 KB',
  url_shorteners: 'No URL shorteners',
  sending_subdomain: 'Sent from a subdomain',
  tracking_subdomain: 'Tracking on your own subdomain',
  list_unsubscribe: 'List-Unsubscribe on bulk mail',
  image_alt: 'Images have alt text',
  spam_score: 'Spam score',
};

const LABELS: Record<Insight['status'], string> = { pass: 'pass', warn: 'warning', fail: 'fail', unavailable: 'unavailable' };

/** How many of each status, worst first: "1 to fix · 2 warnings · 7 passed". */
export function insightCounts(insights: Insight[]): string {
  const n = (s: Insight['status']) => insights.filter((i) => i.status === s).length;
  const parts = [
    n('fail') && `${n('fail')} to fix`,
    n('warn') && `${n('warn')} warning${n('warn') === 1 ? '' : 's'}`,
    `${n('pass')} passed`,
    n('unavailable') && `${n('unavailable')} unavailable`,
  ];
  return parts.filter(Boolean).join(' · ');
}

/** Every insight, the ones to act on first; the spam score's with rspamd's rules behind it. */
export function InsightList({ insights, spam }: { insights: Insight[]; spam: SpamVerdict | null }) {
  const order: Insight['status'][] = ['fail', 'warn', 'unavailable', 'pass'];
  const sorted = [...insights].sort((a, b) => order.indexOf(a.status) - order.indexOf(b.status));
  return (
    <ul class="insights" aria-label="Insights">
      {sorted.map((i) => (
        <li class={`insight ${i.status}`}>
          <Badge value={i.status} label={LABELS[i.status]} />
          <div class="insight-text">
            <strong>{TITLES[i.name]}</strong>
            <p>{i.evidence}</p>
            {i.fix && <p class="muted">{i.fix}</p>}
            {i.name === 'spam_score' && spam && <SpamRules spam={spam} />}
          </div>
        </li>
      ))}
    </ul>
  );
}

/** The headline: rspamd's score, how it judges it, its action and reject score; or `unavailable` and why. */
export function SpamScore({ spam, insights }: { spam: SpamVerdict | null; insights: Insight[] }) {
  const verdict = insights.find((i) => i.name === 'spam_score');
  const scored = spam?.status === 'scored' && spam.score !== null;
  return (
    <section class="spam-score" aria-label="Spam score">
      <span class="spam-label">Spam score</span>
      {scored ? (
        <>
          <span class="spam-number">{spam.score}</span>
          {verdict && <Badge value={verdict.status} label={LABELS[verdict.status]} />}
          <span class="muted small">
            rspamd · {spam.action ?? 'no action'}
            {spam.required_score !== null && ` · rejects at ${spam.required_score}`}
          </span>
        </>
      ) : (
        <>
          <Badge value="unavailable" />
          <span class="muted small">{spam ? 'rspamd could not score it this time (why: below)' : 'rspamd is not configured (spam.rspamd_url)'}</span>
        </>
      )}
    </section>
  );
}

/** The rules that moved the score, heaviest first, folded away. */
function SpamRules({ spam }: { spam: SpamVerdict }) {
  const weighing = spam.symbols.filter((s) => s.score !== 0);
  if (!weighing.length) return null;
  return (
    <details class="symbols">
      <summary class="small">
        {weighing.length} rule{weighing.length === 1 ? '' : 's'} counted ({spam.symbols.length} matched)
      </summary>
      <ul class="plain symbol-list">
        {weighing.map((s) => (
          <li>
            <span class={`code-pill ${s.score > 0 ? 'c5' : 'c2'}`}>{s.score > 0 ? `+${s.score}` : s.score}</span> <span class="mono small">{s.name}</span>
            {s.description && <span class="muted small"> {s.description}</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}
