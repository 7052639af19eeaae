// Webhooks: endpoints, their signing secret (reveal, rotate), the delivery log per event with the
// payload and every attempt's response, and replay.
import { useState } from 'preact/hooks';
import type { Webhook } from '../../../src/schemas/webhooks';
import { del, page, patch, post, qs, url } from '../api';
import { navigate, setQuery, useLocation } from '../router';
import {
  Badge,
  Card,
  Code,
  CopyButton,
  Empty,
  ErrorBox,
  Field,
  FormDialog,
  KeyValue,
  Loading,
  notify,
  PagedTable,
  PageHeader,
  Section,
  Table,
  Time,
  useAction,
  useGet,
  usePaged,
  val,
  ask,
} from '../ui';
import { EMITTED_WEBHOOK_KINDS } from '../../../src/event-catalogue';
import { useCan } from '../role';

/** The kinds Posthorn sends (src/event-catalogue.ts); the API also accepts Resend's others, which never fire. */
const EVENTS: string[] = [...EMITTED_WEBHOOK_KINDS];

export function WebhooksPage() {
  const paged = usePaged('/webhooks');
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        need="member"
        title="Webhooks"
        description="Signed HTTP callbacks for every event, retried until your endpoint answers 2xx."
        actions={
          <button type="button" class="btn primary" onClick={() => setCreating(true)}>
            Add endpoint
          </button>
        }
      />
      <PagedTable
        paged={paged}
        caption="Webhook endpoints"
        href={(w) => page`/dashboard/webhooks/${w.id}`}
        empty={
          <Empty
            title="No webhook endpoints."
            action={
              <button type="button" class="btn primary" onClick={() => setCreating(true)}>
                Add an endpoint
              </button>
            }
          >
            Posthorn signs each request the Svix way; verify it with the endpoint's signing secret.
          </Empty>
        }
        columns={[
          { label: 'Endpoint', render: (w) => <span class="mono truncate">{w.endpoint}</span> },
          { label: 'Events', render: (w) => <span class="small">{w.events.length === EVENTS.length ? 'all' : w.events.join(', ')}</span> },
          { label: 'Status', render: (w) => <Badge value={w.status} /> },
          { label: 'Created', render: (w) => <Time iso={w.created_at} /> },
        ]}
      />
      <WebhookDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}

/**
 * Add or edit an endpoint: its URL, its events, and Posthorn's extensions (docs/api.md §14.1) —
 * the domains whose events it takes (none ticked: every domain) and `include_content`.
 */
function WebhookDialog({ open, onClose, existing, onDone }: { open: boolean; onClose: () => void; existing?: Webhook; onDone?: () => void }) {
  const [endpoint, setEndpoint] = useState(existing?.endpoint ?? '');
  const [events, setEvents] = useState<string[]>(existing?.events ?? EVENTS);
  const [domainIds, setDomainIds] = useState<string[]>(existing?.domain_ids ?? []);
  // Sent only once changed here: a stored id of a domain deleted since is not in the list below,
  // and saving other fields must not turn such a webhook into one that takes every domain.
  const [domainsChanged, setDomainsChanged] = useState(false);
  const [includeContent, setIncludeContent] = useState(existing?.include_content ?? false);
  const domains = useGet(open ? '/domains' : null);
  const known = domains.data?.data ?? [];
  const pickDomain = (id: string, on: boolean) => {
    setDomainsChanged(true);
    setDomainIds(on ? [...domainIds, id] : domainIds.filter((x) => x !== id));
  };
  const action = useAction(async () => {
    // What the team still has: ids of deleted domains go with the first change of the selection.
    const domain_ids = domainIds.filter((id) => known.some((d) => d.id === id));
    if (existing) {
      await patch(url('/webhooks/:id', { id: existing.id }), {
        endpoint,
        events,
        include_content: includeContent,
        ...(domainsChanged ? { domain_ids } : {}),
      });
      notify('Endpoint updated.');
      onDone?.();
      onClose();
    } else {
      const w = await post('/webhooks', {
        endpoint,
        events,
        ...(domain_ids.length ? { domain_ids } : {}),
        ...(includeContent ? { include_content: true } : {}),
      });
      onClose();
      navigate(page`/dashboard/webhooks/${w.id}`);
    }
  });
  return (
    <FormDialog
      open={open}
      title={existing ? 'Edit endpoint' : 'Add a webhook endpoint'}
      onClose={onClose}
      action={action}
      submit={existing ? 'Save' : 'Add endpoint'}
      disabled={!events.length}
    >
      <Field id="w-endpoint" label="Endpoint URL">
        <input id="w-endpoint" type="url" required placeholder="https://example.com/webhooks/posthorn" value={endpoint} onInput={(e) => setEndpoint(val(e))} />
      </Field>
      <fieldset class="checks">
        <legend>Events</legend>
        {EVENTS.map((ev) => (
          <label class="check">
            <input
              type="checkbox"
              checked={events.includes(ev)}
              onChange={(e) => setEvents(e.currentTarget.checked ? [...events, ev] : events.filter((x) => x !== ev))}
            />{' '}
            <span class="mono small">{ev}</span>
          </label>
        ))}
      </fieldset>
      <fieldset class="checks" aria-describedby="w-domains-hint">
        <legend>Domains</legend>
        {known.map((d) => (
          <label class="check">
            <input type="checkbox" checked={domainIds.includes(d.id)} onChange={(e) => pickDomain(d.id, e.currentTarget.checked)} />{' '}
            <span class="mono small">{d.name}</span>
          </label>
        ))}
        {domains.data && !known.length && <p class="hint">No domains yet.</p>}
        <p class="hint" id="w-domains-hint">
          Only the email and domain events of the ticked domains; none ticked, every domain. Contact, topic and suppression events belong to no domain and
          always come.
        </p>
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={includeContent} onChange={(e) => setIncludeContent(e.currentTarget.checked)} aria-describedby="w-content-hint" />{' '}
        Include the message in email.received
      </label>
      <p class="hint" id="w-content-hint">
        Text, HTML and headers (up to 256 KiB, 256 KiB and 64 KiB), with signed links to the attachments and the raw message.
      </p>
    </FormDialog>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const member = useCan('member');
  const w = useGet(url('/webhooks/:id', { id }));
  const { query } = useLocation();
  const selected = query.get('event');
  const events = usePaged(url('/webhooks/:id/events', { id }));
  const [reveal, setReveal] = useState(false);
  const [editing, setEditing] = useState(false);
  const rotate = useAction(async () => {
    await post(url('/webhooks/:id/signing-secret/rotate', { id }));
    notify('Signing secret rotated.');
    setReveal(true);
    w.reload();
  });
  const toggle = useAction(async () => {
    await patch(url('/webhooks/:id', { id }), { status: w.data?.status === 'enabled' ? 'disabled' : 'enabled' });
    w.reload();
  });
  const remove = useAction(async () => {
    await del(url('/webhooks/:id', { id }));
    navigate('/dashboard/webhooks');
  });
  if (w.error) return <ErrorBox error={w.error} />;
  if (!w.data) return <Loading />;
  const x = w.data;
  return (
    <>
      <PageHeader
        need="member"
        back={{ href: '/dashboard/webhooks', label: 'Webhooks' }}
        title={<span class="mono">{x.endpoint}</span>}
        description={<Badge value={x.status} />}
        actions={
          <>
            <button type="button" class="btn danger ghost" onClick={async () => (await ask('Delete this endpoint?', { confirm: 'Delete' })) && remove.run()}>
              Delete
            </button>
            <button type="button" class="btn" onClick={() => toggle.run()}>
              {x.status === 'enabled' ? 'Disable' : 'Enable'}
            </button>
            <button type="button" class="btn" onClick={() => setEditing(true)}>
              Edit
            </button>
          </>
        }
      />
      <ErrorBox error={rotate.error ?? toggle.error ?? remove.error} />
      <Card>
        <KeyValue
          rows={[
            ['Events', <span class="small mono">{x.events.join(', ')}</span>],
            ['Domains', <DomainNames ids={x.domain_ids} />],
            ['Message content', x.include_content ? 'Included in email.received' : 'Metadata only (as Resend)'],
            [
              'Signing secret',
              <span class="copy-cell">
                <code class="token">{reveal ? x.signing_secret : '•'.repeat(32)}</code>
                <button type="button" class="btn small" onClick={() => setReveal(!reveal)}>
                  {reveal ? 'Hide' : 'Reveal'}
                </button>
                {reveal && x.signing_secret && <CopyButton text={x.signing_secret} />}
                <button
                  type="button"
                  class="btn small"
                  disabled={!member}
                  onClick={async () =>
                    (await ask('Rotate the secret? Requests are signed with the new one from now on.', { confirm: 'Rotate' })) && rotate.run()
                  }
                >
                  Rotate
                </button>
              </span>,
            ],
            ['Created', <Time iso={x.created_at} exact />],
          ]}
        />
      </Card>
      <div class="detail-grid">
        <div class="detail-main">
          <Section title="Deliveries">
            <PagedTable
              paged={events}
              caption="Webhook deliveries"
              href={(e) => page`/dashboard/webhooks/${id}` + qs({ event: e.id })}
              empty={<Empty title="Nothing delivered yet.">Events appear here as soon as something happens to your emails.</Empty>}
              columns={[
                { label: 'Event', render: (e) => <span class="mono">{e.type}</span> },
                { label: 'Status', render: (e) => <Badge value={e.status} /> },
                { label: 'Created', render: (e) => <Time iso={e.created_at} /> },
              ]}
            />
          </Section>
        </div>
        <aside class="detail-side">
          {selected ? (
            <EventDetail webhook={id} event={selected} onClose={() => setQuery({ event: null })} />
          ) : (
            <Card>
              <p class="muted">Choose a delivery to see its payload and attempts.</p>
            </Card>
          )}
        </aside>
      </div>
      <WebhookDialog open={editing} existing={x} onClose={() => setEditing(false)} onDone={w.reload} />
    </>
  );
}

/** The webhook's domains by name (docs/api.md §14.1): all when none; an id whose domain is gone, as such. */
function DomainNames({ ids }: { ids: string[] }) {
  const domains = useGet(ids.length ? '/domains' : null);
  if (!ids.length) return <span>All domains</span>;
  if (!domains.data) return <span class="muted">…</span>;
  const names = new Map(domains.data.data.map((d) => [d.id, d.name]));
  return <span class="small mono">{ids.map((id) => names.get(id) ?? `${id} (deleted)`).join(', ')}</span>;
}

function EventDetail({ webhook, event, onClose }: { webhook: string; event: string; onClose: () => void }) {
  const ev = useGet(url('/webhooks/:id/events/:event_id', { id: webhook, event_id: event }));
  const attempts = useGet(url('/webhooks/:id/events/:event_id/attempts', { id: webhook, event_id: event }));
  const replay = useAction(async () => {
    await post(url('/webhooks/:id/events/:event_id/replay', { id: webhook, event_id: event }));
    notify('Replay queued.');
    setTimeout(() => {
      ev.reload();
      attempts.reload();
    }, 1000);
  });
  return (
    <Card>
      <div class="row-between">
        <h2 class="card-title mono">{ev.data?.type ?? 'Event'}</h2>
        <button type="button" class="btn small ghost" onClick={onClose} aria-label="Close the delivery">
          ✕
        </button>
      </div>
      <ErrorBox error={ev.error ?? replay.error} />
      {ev.data && (
        <>
          <p>
            <Badge value={ev.data.status} />{' '}
            {ev.data.next_attempt_at && (
              <span class="muted small">
                next attempt <Time iso={ev.data.next_attempt_at} />
              </span>
            )}
          </p>
          <button type="button" class="btn small" disabled={replay.busy} onClick={() => replay.run()}>
            Replay
          </button>
          <h3>Request body</h3>
          {/* The whole payload, wrapped to the panel's width (it scrolls down, never sideways), with a copy of it. */}
          <Code wrap copy label="Request body">
            {JSON.stringify(ev.data.payload, null, 2)}
          </Code>
        </>
      )}
      <h3>Attempts</h3>
      {attempts.data && !attempts.data.data.length && <p class="muted small">Not tried yet.</p>}
      {attempts.data && attempts.data.data.length > 0 && (
        <Table
          caption="Attempts"
          rows={attempts.data.data}
          columns={[
            { label: 'Sent', render: (a) => <Time iso={a.sent_at} exact /> },
            { label: 'Status', render: (a) => <span class={`code-pill c${String(a.http_status_code ?? 5)[0]}`}>{a.http_status_code ?? 'error'}</span> },
            { label: 'Response', render: (a) => <span class="mono small break">{a.response}</span> },
          ]}
        />
      )}
    </Card>
  );
}
