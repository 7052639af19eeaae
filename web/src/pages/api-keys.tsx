// API keys: create (the token is shown once), permission and domain, revoke.
import { useState } from 'preact/hooks';
import { del, post, qs, url } from '../api';
import { Badge, CopyButton, Empty, ErrorBox, Field, FormDialog, Loading, notify, PageHeader, Table, Time, useAction, useGet, val, ask } from '../ui';
import { useCan } from '../role';

export function ApiKeysPage() {
  const member = useCan('member');
  const keys = useGet('/api-keys');
  const [creating, setCreating] = useState(false);
  const [token, setToken] = useState<string | null>(null);
  const revoke = useAction(async (id: string) => {
    await del(url('/api-keys/:id', { id }));
    notify('Key revoked.');
    keys.reload();
  });
  return (
    <>
      <PageHeader
        need="member"
        title="API keys"
        description="Keys for the REST API and SMTP (user name resend, the key as password)."
        actions={
          <button type="button" class="btn primary" onClick={() => setCreating(true)}>
            Create API key
          </button>
        }
      />
      <ErrorBox error={keys.error ?? revoke.error} />
      {token && (
        <div class="callout success" role="status">
          <p>
            <strong>Copy your new key now.</strong> It is shown only once; Posthorn stores only its hash.
          </p>
          <div class="copy-cell">
            <code class="token">{token}</code> <CopyButton text={token} />
          </div>
          <button type="button" class="btn small" onClick={() => setToken(null)}>
            Done
          </button>
        </div>
      )}
      {!keys.data && !keys.error && <Loading />}
      {keys.data && !keys.data.data.length && (
        <Empty
          title="No API keys."
          action={
            <button type="button" class="btn primary" onClick={() => setCreating(true)}>
              Create a key
            </button>
          }
        />
      )}
      {keys.data && keys.data.data.length > 0 && (
        <Table
          caption="API keys"
          rows={keys.data.data}
          columns={[
            { label: 'Name', render: (k) => <strong>{k.name}</strong> },
            { label: 'Created', render: (k) => <Time iso={k.created_at} /> },
            { label: 'Last used', render: (k) => (k.last_used_at ? <Time iso={k.last_used_at} /> : <Badge value="none" label="never" />) },
            { label: 'Logs', render: (k) => <a href={`/dashboard/logs${qs({ api_key_id: k.id })}`}>Requests</a> },
            {
              label: 'Actions',
              render: (k) => (
                <button
                  type="button"
                  class="btn small danger ghost"
                  disabled={!member}
                  aria-label={`Revoke ${k.name}`}
                  onClick={async () => (await ask(`Revoke ${k.name}? Clients using it stop working at once.`, { confirm: 'Revoke' })) && revoke.run(k.id)}
                >
                  Revoke
                </button>
              ),
            },
          ]}
        />
      )}
      <CreateKey
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(t) => {
          setToken(t);
          keys.reload();
        }}
      />
    </>
  );
}

function CreateKey({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (token: string) => void }) {
  const domains = useGet(open ? '/domains' : null);
  const [form, setForm] = useState({ name: '', permission: 'full_access', domain_id: '' });
  const action = useAction(async () => {
    const k = await post('/api-keys', {
      name: form.name,
      permission: form.permission,
      ...(form.permission === 'sending_access' && form.domain_id ? { domain_id: form.domain_id } : {}),
    });
    setForm({ name: '', permission: 'full_access', domain_id: '' });
    onCreated(k.token);
    onClose();
  });
  return (
    <FormDialog open={open} title="Create an API key" onClose={onClose} action={action} submit="Create key">
      <Field id="k-name" label="Name">
        <input id="k-name" required maxLength={50} placeholder="Production" value={form.name} onInput={(e) => setForm({ ...form, name: val(e) })} />
      </Field>
      <Field id="k-perm" label="Permission">
        <select id="k-perm" value={form.permission} onChange={(e) => setForm({ ...form, permission: val(e) })}>
          <option value="full_access">Full access — every API route</option>
          <option value="sending_access">Sending access — only sending email</option>
        </select>
      </Field>
      {form.permission === 'sending_access' && (
        <Field id="k-domain" label="Domain">
          <select id="k-domain" value={form.domain_id} onChange={(e) => setForm({ ...form, domain_id: val(e) })}>
            <option value="">Any domain</option>
            {(domains.data?.data ?? []).map((d) => (
              <option value={d.id}>{d.name}</option>
            ))}
          </select>
        </Field>
      )}
    </FormDialog>
  );
}
