// Automations (docs/api.md §23–§24): the team's automations and event definitions; an automation's
// steps and connections, its runs (filtered by status), and a run's step history with each step's
// times, outcome or error. Automations are made and changed in the visual builder
// (automation-builder.tsx, loaded on demand) or through the API.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  Badge,
  Card,
  Code,
  ContactName,
  Empty,
  ErrorBox,
  KeyValue,
  Loading,
  PagedTable,
  PageHeader,
  Section,
  Table,
  Tabs,
  Time,
  useGet,
  usePaged,
} from '../ui';
import { useLive } from '../live';
import type { Automation, AutomationRunSummary } from '../../../src/schemas/automations';
import { get, qs, url, page } from '../api';
import { chunk } from '../chunk';
import { setQuery, useLocation } from '../router';

/** A step of an automation as its answer lists it. */
type Step = Automation['steps'][number];

/** A run's statuses, for the filter (src/schemas/automations.ts `RUN_STATUSES`, a value the bundle does not take). */
const STATUSES: AutomationRunSummary['status'][] = ['running', 'completed', 'failed', 'cancelled'];

export function AutomationsPage() {
  const { query } = useLocation();
  const tab = query.get('tab') === 'events' ? 'events' : 'automations';
  return (
    <>
      <PageHeader
        title="Automations"
        description="Workflows started by your events, run step by step. Build them here, or through the API (resend.automations)."
        need="member"
        actions={
          <a class="btn primary" href="/dashboard/automations/new">
            New automation
          </a>
        }
      />
      <Tabs
        label="Automations and events"
        current={tab}
        onChange={(id) => setQuery({ tab: id === 'automations' ? null : id, after: null, before: null })}
        tabs={[
          { id: 'automations', label: 'Automations' },
          { id: 'events', label: 'Events' },
        ]}
      />
      <div role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'automations' ? <AutomationList /> : <EventList />}
      </div>
    </>
  );
}

function AutomationList() {
  const paged = usePaged('/automations');
  return (
    <PagedTable
      paged={paged}
      caption="Automations"
      href={(a) => page`/dashboard/automations/${a.id}`}
      empty={
        <Empty
          title="No automations yet."
          action={
            <a class="btn primary" href="/dashboard/automations/new">
              Build an automation
            </a>
          }
        >
          A trigger event, then steps: build one here, or with resend.automations.create().
        </Empty>
      }
      columns={[
        { label: 'Name', render: (a) => a.name },
        { label: 'Status', render: (a) => <Badge value={a.status} /> },
        { label: 'Updated', render: (a) => <Time iso={a.updated_at} /> },
      ]}
    />
  );
}

function EventList() {
  const paged = usePaged('/events');
  return (
    <PagedTable
      paged={paged}
      caption="Events"
      empty={
        <Empty title="No event definitions.">
          Any event can be sent with resend.events.send() and start automations; a definition (resend.events.create()) adds a schema its payloads are checked
          against.
        </Empty>
      }
      columns={[
        { label: 'Name', render: (e) => <span class="mono">{e.name}</span> },
        {
          label: 'Schema',
          render: (e) =>
            e.schema ? (
              <span class="mono small">
                {Object.entries(e.schema)
                  .map(([k, t]) => `${k}: ${t}`)
                  .join(', ')}
              </span>
            ) : (
              <span class="muted">none</span>
            ),
        },
        { label: 'Created', render: (e) => <Time iso={e.created_at} /> },
      ]}
    />
  );
}

/** A template's name by id; null once it is gone (deleted after the automation was made). */
type TemplateNames = Record<string, string | null>;

/**
 * The names of the templates the send_email steps use: one GET /templates/{id} per distinct
 * template (an automation names a few), so a step reads "Welcome email", linked, not a UUID.
 */
function useTemplateNames(steps: Step[] | undefined): TemplateNames {
  const ids = [...new Set((steps ?? []).filter((s) => s.type === 'send_email').map((s) => templateOf(s)))].sort();
  const [names, setNames] = useState<TemplateNames>({});
  const key = ids.join(',');
  useEffect(() => {
    let live = true;
    Promise.all(
      ids.map((id) =>
        get(url('/templates/:id_or_alias', { id_or_alias: id })).then(
          (t) => [id, t.name] as const,
          () => [id, null] as const,
        ),
      ),
    ).then((pairs) => live && setNames(Object.fromEntries(pairs)));
    return () => {
      live = false;
    };
  }, [key]);
  return names;
}

const templateOf = (s: Step) => (s.config.template as { id: string }).id;

/** A send_email step: its template by name, linked to the template's page (by id until the name arrives). */
function sendSummary(s: Step, names: TemplateNames): ComponentChildren {
  const id = templateOf(s);
  const name = names[id];
  const subject = s.config.subject ? <span class="mono"> — "{String(s.config.subject)}"</span> : null;
  if (name === null)
    return (
      <>
        <span class="mono">template {id}</span> <span class="muted">(deleted)</span>
        {subject}
      </>
    );
  return (
    <>
      template{' '}
      <a class="inline-link" href={page`/dashboard/templates/${id}`}>
        {name ?? <span class="mono">{id}</span>}
      </a>
      {subject}
    </>
  );
}

/** A step's config in one line: what it does. */
function summary(s: Step): string {
  const c = s.config;
  switch (s.type) {
    case 'trigger':
    case 'wait_for_event':
      return `${c.event_name}${c.timeout ? `, timeout ${c.timeout}` : ''}`;
    case 'delay':
      return String(c.duration);
    case 'add_to_segment':
    case 'remove_from_segment':
      return `segment ${c.segment_id}`;
    case 'condition':
      return ruleText(c);
    case 'contact_update':
      return Object.entries({ ...c, ...((c.properties as Record<string, unknown>) ?? {}) })
        .filter(([k]) => k !== 'properties')
        .map(([k, v]) => `${k} ← ${valueText(v)}`)
        .join(', ');
    default:
      return '';
  }
}

/** A value as a step shows it: `{var}` by its path. */
function valueText(v: unknown): string {
  return v && typeof v === 'object' && 'var' in v ? String((v as { var: unknown }).var) : JSON.stringify(v);
}

/** A condition in words: `event.plan eq "pro"`, groups in brackets. */
function ruleText(r: Record<string, unknown>): string {
  if (r.type === 'and' || r.type === 'or') return `(${(r.rules as Record<string, unknown>[]).map(ruleText).join(` ${r.type} `)})`;
  return `${r.field} ${String(r.operator).replace(/_/g, ' ')}${'value' in r ? ` ${JSON.stringify(r.value)}` : ''}`;
}

export function AutomationPage({ id }: { id: string }) {
  const a = useGet(url('/automations/:id', { id }));
  const { query } = useLocation();
  const status = query.get('status');
  const selected = query.get('run');
  const runs = usePaged(url('/automations/:id/runs', { id }), { status });
  useLive(['automation_run'], runs.reload);
  const templateNames = useTemplateNames(a.data?.steps);
  if (a.error) return <ErrorBox error={a.error} />;
  if (!a.data) return <Loading />;
  const x = a.data;
  const next = (key: string) => x.connections.filter((c) => c.from === key);
  return (
    <>
      <PageHeader
        need="member"
        back={{ href: '/dashboard/automations', label: 'Automations' }}
        title={x.name}
        description={<Badge value={x.status} />}
        actions={
          <a class="btn" href={page`/dashboard/automations/${x.id}/edit`}>
            Edit in the builder
          </a>
        }
      />
      <Card>
        <KeyValue
          rows={[
            ['Trigger', <span class="mono">{String(x.steps.find((s) => s.type === 'trigger')?.config.event_name ?? '')}</span>],
            ['Created', <Time iso={x.created_at} exact />],
            ['Updated', <Time iso={x.updated_at} exact />],
          ]}
        />
      </Card>
      <Section title="Steps">
        <Table
          caption="Steps"
          rows={x.steps.map((s) => ({ ...s, id: s.key }))}
          columns={[
            { label: 'Key', render: (s) => <span class="mono">{s.key}</span> },
            { label: 'Type', render: (s) => <span class="mono small">{s.type}</span> },
            {
              label: 'Does',
              render: (s) =>
                s.type === 'send_email' ? <span class="small break">{sendSummary(s, templateNames)}</span> : <span class="mono small break">{summary(s)}</span>,
            },
            {
              label: 'Then',
              render: (s) => (
                <span class="small">
                  {next(s.key)
                    .map((c) => (c.type === 'default' ? c.to : `${c.type.replace(/_/g, ' ')} → ${c.to}`))
                    .join('; ') || <span class="muted">end</span>}
                </span>
              ),
            },
          ]}
        />
      </Section>
      <div class="detail-grid automation">
        <div class="detail-main">
          <Section title="Runs">
            <div class="filters">
              <label>
                <span class="sr-only">Status</span>
                <select value={status ?? ''} onChange={(e) => setQuery({ status: e.currentTarget.value || null, after: null, before: null, run: null })}>
                  <option value="">All statuses</option>
                  {STATUSES.map((s) => (
                    <option value={s}>{s}</option>
                  ))}
                </select>
              </label>
            </div>
            <PagedTable
              paged={runs}
              caption="Runs"
              href={(r) => page`/dashboard/automations/${id}` + qs({ status, run: r.id })}
              empty={<Empty title="No runs.">A run starts each time the trigger event is sent for a contact.</Empty>}
              columns={[
                { label: 'Started', render: (r) => <Time iso={r.started_at} /> },
                { label: 'Contact', render: (r) => <ContactName id={r.contact_id} /> },
                { label: 'Status', render: (r) => <Badge value={r.status} /> },
                { label: 'Ended', render: (r) => <Time iso={r.completed_at} /> },
              ]}
            />
          </Section>
        </div>
        <aside class="detail-side">
          {selected ? (
            <RunDetail automation={id} run={selected} />
          ) : (
            <Card>
              <p class="muted">Choose a run to see its steps.</p>
            </Card>
          )}
        </aside>
      </div>
    </>
  );
}

/** A field of a step's error, when it is text. */
const text = (v: unknown) => (typeof v === 'string' ? v : undefined);

function RunDetail({ automation, run }: { automation: string; run: string }) {
  const r = useGet(url('/automations/:id/runs/:run_id', { id: automation, run_id: run }));
  useLive(['automation_run'], r.reload, run);
  return (
    <Card>
      <div class="row-between">
        <h2 class="card-title">Run</h2>
        <button type="button" class="btn small ghost" onClick={() => setQuery({ run: null })} aria-label="Close the run">
          ✕
        </button>
      </div>
      <ErrorBox error={r.error} />
      {r.data && (
        <>
          <p>
            <Badge value={r.data.status} /> <span class="muted small">contact</span> <ContactName id={r.data.contact_id} />
          </p>
          <ol class="run-steps">
            {r.data.steps.map((s) => (
              <li>
                <div class="row-between">
                  <span>
                    <span class="mono">{s.key}</span> <span class="muted small">{s.type}</span>
                  </span>
                  <Badge value={s.status} />
                </div>
                <p class="muted small">
                  <Time iso={s.started_at} exact />
                  {s.completed_at && s.completed_at !== s.started_at && (
                    <>
                      {' → '}
                      <Time iso={s.completed_at} exact />
                    </>
                  )}
                </p>
                {s.error && <p class="error-text small">{text(s.error.message) ?? text(s.error.name)}</p>}
                {s.output && s.type === 'send_email' && typeof s.output.email_id === 'string' ? (
                  <a class="small" href={page`/dashboard/emails/${s.output.email_id}`}>
                    The email
                  </a>
                ) : (
                  s.output && <Code>{JSON.stringify(s.output, null, 2)}</Code>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
    </Card>
  );
}

/** The builder, its module (and @xyflow/system's) loaded when first opened. */
const useBuilder = chunk(() => import('./automation-builder'));
export function AutomationBuilder({ id }: { id?: string }) {
  const { mod, error } = useBuilder();
  if (error) return <ErrorBox error={{ message: `The builder could not be loaded: ${error.message}` }} />;
  return mod ? <mod.AutomationBuilderPage id={id} /> : <Loading />;
}
