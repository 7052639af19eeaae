// Logs: every API request made with a key, filtered by method, status and key, with its bodies.
import { url, page } from '../api';
import { setQuery, useLocation } from '../router';
import { Card, Code, Empty, ErrorBox, ExportButton, KeyValue, Loading, PagedTable, PageHeader, Time, type InputEvent, useGet, usePaged, val } from '../ui';

export function LogsPage() {
  const { query } = useLocation();
  const method = query.get('method') ?? '';
  const status = query.get('status') ?? '';
  const key = query.get('api_key_id') ?? '';
  const keys = useGet('/api-keys');
  const names = new Map((keys.data?.data ?? []).map((k) => [k.id, k.name]));
  const paged = usePaged('/logs', { method, status, api_key_id: key });
  const filter = (k: string) => (e: InputEvent) => setQuery({ [k]: val(e), after: null, before: null });
  return (
    <>
      <PageHeader
        title="Logs"
        description="Every API request made with one of your keys, kept for the retention period."
        actions={<ExportButton path={url('/logs/export', { method, status, api_key_id: key })} what="the requests" />}
      />
      <div class="filters">
        <label>
          <span class="sr-only">Method</span>
          <select value={method} onChange={filter('method')}>
            <option value="">Every method</option>
            {['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].map((m) => (
              <option value={m}>{m}</option>
            ))}
          </select>
        </label>
        <label>
          <span class="sr-only">Status</span>
          <select value={status} onChange={filter('status')}>
            <option value="">Every status</option>
            <option value="2xx">2xx success</option>
            <option value="4xx">4xx client error</option>
            <option value="5xx">5xx server error</option>
          </select>
        </label>
        <label>
          <span class="sr-only">API key</span>
          <select value={key} onChange={filter('api_key_id')}>
            <option value="">Every key</option>
            {(keys.data?.data ?? []).map((k) => (
              <option value={k.id}>{k.name}</option>
            ))}
          </select>
        </label>
      </div>
      <PagedTable
        paged={paged}
        caption="API requests"
        href={(l) => page`/dashboard/logs/${l.id}`}
        empty={
          <Empty
            title={method || status || key ? 'No request matches these filters.' : 'No API requests yet.'}
            action={method || status || key ? <a href="/dashboard/logs">Clear the filters</a> : <a href="/dashboard/api-keys">Get an API key</a>}
          >
            Requests made with an API key (the SDKs, curl, your app) appear here with their bodies and answers.
          </Empty>
        }
        columns={[
          { label: 'Endpoint', render: (l) => <span class="mono">{l.endpoint}</span> },
          { label: 'Method', render: (l) => <span class="mono">{l.method}</span> },
          { label: 'Status', render: (l) => <span class={`code-pill c${String(l.response_status)[0]}`}>{l.response_status}</span> },
          { label: 'Key', render: (l) => (l.api_key_id ? (names.get(l.api_key_id) ?? 'revoked key') : '—') },
          { label: 'When', render: (l) => <Time iso={l.created_at} /> },
        ]}
      />
    </>
  );
}

export function LogPage({ id }: { id: string }) {
  const l = useGet(url('/logs/:id', { id }));
  if (l.error) return <ErrorBox error={l.error} />;
  if (!l.data) return <Loading />;
  const x = l.data;
  return (
    <>
      <PageHeader
        back={{ href: '/dashboard/logs', label: 'Logs' }}
        title={<span class="mono">{`${x.method} ${x.endpoint}`}</span>}
        description={<span class={`code-pill c${String(x.response_status)[0]}`}>{x.response_status}</span>}
      />
      <Card>
        <KeyValue
          rows={[
            ['When', <Time iso={x.created_at} exact />],
            ['User agent', <span class="mono small">{x.user_agent}</span>],
            ['API key', <KeyName id={x.api_key_id} />],
          ]}
        />
      </Card>
      <div class="grid2">
        <Card>
          <h2 class="card-title">Request body</h2>
          {x.request_body === null ? <p class="muted">No body.</p> : <Code>{JSON.stringify(x.request_body, null, 2)}</Code>}
        </Card>
        <Card>
          <h2 class="card-title">Response body</h2>
          {x.response_body === null ? <p class="muted">No body.</p> : <Code>{JSON.stringify(x.response_body, null, 2)}</Code>}
        </Card>
      </div>
    </>
  );
}

/** The request's API key by name, linked to the keys; a key since revoked, as such. */
function KeyName({ id }: { id: string | null }) {
  const keys = useGet(id ? '/api-keys' : null);
  if (!id) return <span class="muted">—</span>;
  if (!keys.data) return <span class="muted">…</span>;
  const k = keys.data.data.find((x) => x.id === id);
  return k ? <a href="/dashboard/api-keys">{k.name}</a> : <span class="muted">revoked key</span>;
}
