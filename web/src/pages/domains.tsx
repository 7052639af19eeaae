// Domains: add one, publish its DNS records (copy buttons, per-record status), verify, and switch
// tracking, TLS and receiving; what its DMARC reports say and the policy's next step
// (docs/deliverability.md §4).
import { useState } from 'preact/hooks';
import type { DnsRecord, UpdateDomainRequest } from '../../../src/schemas/domains';
import { del, patch, post, url, page } from '../api';
import { navigate, setQuery, useLocation } from '../router';
import {
  Badge,
  Card,
  CopyButton,
  Empty,
  ErrorBox,
  Field,
  FormDialog,
  Loading,
  notify,
  num,
  PageHeader,
  pct,
  Section,
  Table,
  Time,
  useAction,
  useGet,
  val,
  ask,
} from '../ui';
import { TimeChart } from '../chart';
import { useLive } from '../live';
import { useCan } from '../role';

export function DomainsPage() {
  const list = useGet('/domains');
  useLive(['domain'], list.reload);
  // `?add=1` opens the form (the getting-started checklist links here).
  const { query } = useLocation();
  const [adding, setAdding] = useState(query.get('add') === '1');
  return (
    <>
      <PageHeader
        need="member"
        title="Domains"
        description="Domains you send from and receive at. Each needs a few DNS records."
        actions={
          <button type="button" class="btn primary" onClick={() => setAdding(true)}>
            Add domain
          </button>
        }
      />
      <ErrorBox error={list.error} />
      {!list.data && !list.error && <Loading />}
      {list.data && !list.data.data.length && (
        <Empty
          title="No domains yet."
          action={
            <button type="button" class="btn primary" onClick={() => setAdding(true)}>
              Add your first domain
            </button>
          }
        >
          Add the domain you send from; Posthorn shows the SPF and DKIM records to publish, then verifies them.
        </Empty>
      )}
      {list.data && list.data.data.length > 0 && (
        <Table
          caption="Domains"
          rows={list.data.data}
          href={(d) => page`/dashboard/domains/${d.id}`}
          columns={[
            { label: 'Domain', render: (d) => <strong>{d.name}</strong> },
            { label: 'Status', render: (d) => <Badge value={d.status} /> },
            { label: 'Sending', render: (d) => <Badge value={d.capabilities.sending} /> },
            { label: 'Receiving', render: (d) => <Badge value={d.capabilities.receiving} /> },
            { label: 'Added', render: (d) => <Time iso={d.created_at} /> },
          ]}
        />
      )}
      <AddDomain
        open={adding}
        onClose={() => {
          setAdding(false);
          if (query.get('add')) setQuery({ add: null });
        }}
      />
    </>
  );
}

function AddDomain({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [name, setName] = useState('');
  const [receiving, setReceiving] = useState(false);
  const action = useAction(async () => {
    const d = await post('/domains', { name, capabilities: { sending: 'enabled', receiving: receiving ? 'enabled' : 'disabled' } });
    onClose();
    navigate(page`/dashboard/domains/${d.id}`);
  });
  return (
    <FormDialog open={open} title="Add a domain" onClose={onClose} action={action} submit="Add domain">
      <Field id="d-name" label="Domain name" hint="A domain or subdomain you control, e.g. mail.example.com.">
        <input id="d-name" required placeholder="example.com" value={name} onInput={(e) => setName(val(e))} aria-describedby="d-name-hint" />
      </Field>
      <label class="check">
        <input type="checkbox" checked={receiving} onChange={(e) => setReceiving(e.currentTarget.checked)} /> Also receive email at this domain
      </label>
    </FormDialog>
  );
}

export function DomainPage({ id }: { id: string }) {
  const member = useCan('member');
  const d = useGet(url('/domains/:id', { id }));
  // The pools of sending IPs (README "Sending IPs and warm-up"): a choice only when some are configured.
  const ips = useGet('/ips');
  const pools = [...new Set(['default', ...(ips.data?.data ?? []).map((ip) => ip.pool)])];
  // Regions (README "Regions"): a choice only when the operator defines some; a region with no node alive makes its mail wait.
  const regions = useGet('/regions');
  const regionList = regions.data?.data ?? [];
  // Verification runs in the background: its outcome arrives on the live stream.
  useLive(['domain'], d.reload, id);
  const verify = useAction(async () => {
    await post(url('/domains/:id/verify', { id }));
    notify('Checking the DNS records…');
  });
  const update = useAction(async (body: UpdateDomainRequest) => {
    await patch(url('/domains/:id', { id }), body);
    notify('Domain updated.');
    d.reload();
  });
  const remove = useAction(async () => {
    await del(url('/domains/:id', { id }));
    navigate('/dashboard/domains');
  });
  const rotate = useAction(async (ed25519: boolean) => {
    await post(url('/domains/:id/dkim/rotate', { id }), { ed25519 });
    notify('New DKIM keys made: publish their records, then verify.');
    d.reload();
  });
  if (d.error) return <ErrorBox error={d.error} />;
  if (!d.data) return <Loading />;
  const x = d.data;
  return (
    <>
      <PageHeader
        need="member"
        back={{ href: '/dashboard/domains', label: 'Domains' }}
        title={x.name}
        description={<Badge value={x.status} />}
        actions={
          <>
            <button
              type="button"
              class="btn danger ghost"
              onClick={async () => (await ask(`Delete ${x.name}? Scheduled emails from it will fail.`, { confirm: 'Delete' })) && remove.run()}
            >
              Delete
            </button>
            <button type="button" class="btn primary" disabled={verify.busy} onClick={() => verify.run()}>
              Verify DNS records
            </button>
          </>
        }
      />
      <ErrorBox error={verify.error ?? update.error ?? remove.error ?? rotate.error} />
      {regionList.some((r) => r.waiting && r.name === x.region) && (
        <p class="callout warning">
          No node of the region <strong>{x.region}</strong> is running: this domain's mail waits in the queue until one is back.
        </p>
      )}
      {x.status !== 'verified' && (
        <p class="callout">
          Publish these records at your DNS provider, then press <strong>Verify DNS records</strong>. Changes can take from minutes to a few hours to propagate;
          Posthorn keeps checking pending domains.
        </p>
      )}
      <Section title="DNS records">
        <Records caption="DNS records to publish" records={x.records} />
      </Section>
      {!!x.recommended_records.length && (
        <Section title="Recommended records">
          <p class="muted small">Not needed for verification, but mailbox providers expect a DMARC policy from bulk senders.</p>
          <Records caption="Recommended DNS records" records={x.recommended_records} />
        </Section>
      )}
      {x.capabilities.sending === 'enabled' && <Dmarc id={id} />}
      {x.capabilities.sending === 'enabled' && (
        <Section title="DKIM key">
          <Card>
            <p>
              Signing with selector <span class="mono">{x.dkim.selector}</span>
              {x.dkim.ed25519_selector && (
                <>
                  {' '}
                  and <span class="mono">{x.dkim.ed25519_selector}</span>
                </>
              )}{' '}
              <span class="muted small">({x.dkim.algorithms.join(', ')})</span>
            </p>
            {x.dkim.rotation ? (
              <p class="callout">
                Rotation pending since <Time iso={x.dkim.rotation.started_at} exact />: publish the records of{' '}
                <span class="mono">{x.dkim.rotation.selector}</span>
                {x.dkim.rotation.ed25519_selector && (
                  <>
                    {' '}
                    and <span class="mono">{x.dkim.rotation.ed25519_selector}</span>
                  </>
                )}{' '}
                above. Signing switches to them once they verify.
              </p>
            ) : (
              <div class="row-actions">
                <button type="button" class="btn" disabled={rotate.busy || !member} onClick={() => rotate.run(false)}>
                  Rotate key
                </button>
                <button type="button" class="btn" disabled={rotate.busy || !member} onClick={() => rotate.run(true)}>
                  Rotate, with Ed25519
                </button>
              </div>
            )}
            {x.dkim.previous && (
              <p class="small">
                Retired selector{x.dkim.previous.selectors.length > 1 ? 's' : ''} <span class="mono">{x.dkim.previous.selectors.join(', ')}</span>:{' '}
                {x.dkim.previous.safe_to_remove ? (
                  <strong>safe to remove from your DNS now.</strong>
                ) : (
                  <>
                    keep published until <Time iso={x.dkim.previous.remove_after} exact />.
                  </>
                )}
              </p>
            )}
          </Card>
        </Section>
      )}
      <Section title="Settings">
        <Card>
          <div class="settings-list">
            <Toggle
              label="Open tracking"
              hint="Add a tracking pixel to HTML emails."
              checked={x.open_tracking}
              onChange={(v) => update.run({ open_tracking: v })}
            />
            <Toggle
              label="Click tracking"
              hint="Route links through Posthorn to count clicks."
              checked={x.click_tracking}
              onChange={(v) => update.run({ click_tracking: v })}
            />
            <Toggle
              label="Require TLS"
              hint="Never deliver over an unencrypted connection (enforced TLS)."
              checked={x.tls === 'enforced'}
              onChange={(v) => update.run({ tls: v ? 'enforced' : 'opportunistic' })}
            />
            <Toggle
              label="Receiving"
              hint="Accept inbound mail for this domain (needs the MX record)."
              checked={x.capabilities.receiving === 'enabled'}
              onChange={(v) => update.run({ capabilities: { receiving: v ? 'enabled' : 'disabled' } })}
            />
            {pools.length > 1 && (
              <Field id="domain-pool" label="Sending IP pool" hint="The pool of sending IPs this domain's mail leaves from.">
                <select id="domain-pool" aria-describedby="domain-pool-hint" value={x.pool ?? 'default'} onChange={(e) => update.run({ pool: val(e) })}>
                  {pools.map((p) => (
                    <option value={p}>{p}</option>
                  ))}
                </select>
              </Field>
            )}
            {regionList.some((r) => r.defined) && (
              <Field id="domain-region" label="Region" hint="Only the nodes of this region send this domain's mail.">
                <select id="domain-region" aria-describedby="domain-region-hint" value={x.region} onChange={(e) => update.run({ region: val(e) })}>
                  {regionList.map((r) => (
                    <option value={r.name}>{r.waiting ? `${r.name} (no node running)` : r.name}</option>
                  ))}
                </select>
              </Field>
            )}
          </div>
        </Card>
      </Section>
    </>
  );
}

function Toggle({ label, hint, checked, onChange }: { label: string; hint: string; checked: boolean; onChange: (v: boolean) => void }) {
  const id = `t-${label.replace(/\W/g, '').toLowerCase()}`;
  return (
    <div class="toggle-row">
      <div>
        <label for={id} class="strong">
          {label}
        </label>
        <p class="muted small" id={`${id}-hint`}>
          {hint}
        </p>
      </div>
      <input
        id={id}
        type="checkbox"
        // biome-ignore lint/a11y/useAriaPropsForRole: a checkbox's own checked state is the switch's (WAI-ARIA APG switch pattern, HTML-AAM); aria-checked would repeat it.
        role="switch"
        class="switch"
        checked={checked}
        aria-describedby={`${id}-hint`}
        onChange={(e) => onChange(e.currentTarget.checked)}
      />
    </div>
  );
}

function Records({ caption, records }: { caption: string; records: DnsRecord[] }) {
  if (!records.length) return <p class="muted">No records needed.</p>;
  return (
    <Table
      caption={caption}
      rows={records.map((r, i) => ({ ...r, id: String(i) }))}
      columns={[
        { label: 'Purpose', render: (r) => r.record },
        { label: 'Type', render: (r) => <span class="mono">{r.type}</span> },
        {
          label: 'Name',
          render: (r) => (
            <span class="copy-cell">
              <span class="mono break">{r.name}</span> <CopyButton text={r.name} label="Copy" />
            </span>
          ),
        },
        {
          label: 'Value',
          render: (r) => (
            <span class="copy-cell">
              <span class="mono break value">{r.value}</span> <CopyButton text={r.value} label="Copy" />
            </span>
          ),
        },
        { label: 'Priority', render: (r) => r.priority ?? '—' },
        { label: 'Status', render: (r) => <Badge value={r.status} /> },
      ]}
    />
  );
}

const STEP_TITLES: Record<string, string> = {
  publish: 'Publish a DMARC record',
  add_rua: 'Send the reports to Posthorn',
  fix: 'Fix authentication first',
  wait: 'Keep monitoring',
  quarantine: 'Move to p=quarantine',
  reject: 'Move to p=reject',
  done: 'Policy at p=reject',
};

/** What the domain's DMARC aggregate reports say: the policy step, the days, the sources. */
function Dmarc({ id }: { id: string }) {
  const r = useGet(url('/domains/:id/dmarc', { id }));
  if (r.error) return <ErrorBox error={r.error} />;
  if (!r.data) return <Loading />;
  const x = r.data;
  const { step, totals } = x;
  return (
    <Section title="DMARC reports">
      <p class="muted small">
        Mailbox providers report daily who sent mail as this domain, and whether it passed DMARC. They reach Posthorn at <span class="mono">{x.rua}</span>. Last{' '}
        {x.days} days; current policy: <strong>{x.policy ? `p=${x.policy}` : 'none published'}</strong>.
      </p>
      <div
        class={`callout${step.action === 'fix' ? ' warning' : step.action === 'quarantine' || step.action === 'reject' || step.action === 'done' ? ' success' : ''}`}
      >
        <p>
          <strong>{STEP_TITLES[step.action]}.</strong> {step.message}
        </p>
        {step.record && (
          <p class="copy-cell">
            <span class="mono break value">{step.record}</span> <CopyButton text={step.record} label="Copy" />
          </p>
        )}
      </div>
      {totals.messages === 0 ? (
        <Empty title="No reports yet">Providers send them once a day, once the DMARC record names Posthorn's address.</Empty>
      ) : (
        <>
          <div class="stats">
            <div class="stat">
              <span class="stat-label">Messages</span>
              <span class="stat-value">{num(totals.messages)}</span>
              <span class="stat-sub muted">{num(totals.reports)} reports</span>
            </div>
            <div class="stat">
              <span class="stat-label">DMARC pass</span>
              <span class="stat-value">{pct(totals.dmarc_pass / totals.messages)}</span>
            </div>
            <div class="stat">
              <span class="stat-label">DKIM aligned</span>
              <span class="stat-value">{pct(totals.dkim_aligned / totals.messages)}</span>
            </div>
            <div class="stat">
              <span class="stat-label">SPF aligned</span>
              <span class="stat-value">{pct(totals.spf_aligned / totals.messages)}</span>
            </div>
          </div>
          {x.series.length > 1 && (
            <TimeChart
              label="Messages and DMARC-aligned messages per day"
              height={180}
              times={x.series.map((d) => Date.parse(`${d.date}T12:00:00Z`) / 1000)}
              series={[
                { label: 'Messages', color: '#6366f1', values: x.series.map((d) => d.messages) },
                { label: 'Aligned', color: '#16a34a', values: x.series.map((d) => d.aligned) },
              ]}
            />
          )}
          <Table
            caption="Sources of mail in this domain's name"
            rows={x.sources.map((s) => ({ ...s, id: s.ip }))}
            columns={[
              {
                label: 'Source',
                render: (s) => (
                  <>
                    <span class="mono">{s.ip}</span>
                    {s.ptr && <div class="muted small break">{s.ptr}</div>}
                  </>
                ),
              },
              { label: 'Sender', render: (s) => (s.own ? <Badge value="verified" label="Posthorn" /> : <Badge value="not_started" label="other" />) },
              { label: 'Messages', render: (s) => num(s.messages) },
              { label: 'DMARC pass', render: (s) => pct(s.dmarc_pass / s.messages) },
              { label: 'DKIM', render: (s) => pct(s.dkim_aligned / s.messages) },
              { label: 'SPF', render: (s) => pct(s.spf_aligned / s.messages) },
              { label: 'Quarantined / rejected', render: (s) => `${num(s.quarantined)} / ${num(s.rejected)}` },
            ]}
          />
        </>
      )}
    </Section>
  );
}
