// Received (inbound) emails with the SPF, DKIM and DMARC verdicts taken on receipt.
import { useState } from 'preact/hooks';
import { url, page } from '../api';
import { Badge, bytes, Card, Code, Empty, ErrorBox, KeyValue, Loading, PagedTable, PageHeader, Tabs, Time, useGet, usePaged } from '../ui';
import { EmailPreview } from './preview';
import type { ReceivedEmailSummary, Verdict } from '../../../src/schemas/receiving';

const tone = (v: Verdict | undefined) => (v === 'pass' ? 'pass' : v === 'fail' ? 'fail' : 'neutral');

function Verdicts({ a }: { a: ReceivedEmailSummary['authentication'] }) {
  if (!a) return <span class="muted">not checked</span>;
  return (
    <span class="verdicts">
      <Badge value={tone(a.spf)} label={`SPF ${a.spf}`} /> <Badge value={tone(a.dkim)} label={`DKIM ${a.dkim}`} />{' '}
      <Badge value={tone(a.dmarc)} label={`DMARC ${a.dmarc}`} />
    </span>
  );
}

export function ReceivingPage() {
  const paged = usePaged('/emails/receiving');
  return (
    <>
      <PageHeader title="Receiving" description="Mail that arrived at your receiving domains, with its authentication verdicts." />
      <PagedTable
        paged={paged}
        caption="Received emails"
        href={(r) => page`/dashboard/receiving/${r.id}`}
        empty={
          <Empty title="Nothing received yet." action={<a href="/dashboard/domains">Set up a receiving domain</a>}>
            Point a domain's MX record at this server and turn on receiving for it; mail sent there appears here and fires <code>email.received</code>.
          </Empty>
        }
        columns={[
          { label: 'From', render: (r) => <span class="truncate">{r.from || '(no sender)'}</span> },
          { label: 'Subject', render: (r) => <span class="truncate">{r.subject}</span> },
          { label: 'For', render: (r) => <span class="truncate">{r.received_for.join(', ')}</span> },
          { label: 'Authentication', render: (r) => <Verdicts a={r.authentication} /> },
          { label: 'Received', render: (r) => <Time iso={r.created_at} /> },
        ]}
      />
    </>
  );
}

export function ReceivedPage({ id }: { id: string }) {
  const r = useGet(url('/emails/receiving/:id', { id, html_format: 'data_uri' }));
  const [tab, setTab] = useState('preview');
  if (r.error) return <ErrorBox error={r.error} />;
  if (!r.data) return <Loading />;
  const e = r.data;
  return (
    <>
      <PageHeader
        back={{ href: '/dashboard/receiving', label: 'Receiving' }}
        title={e.subject || '(no subject)'}
        description={<Verdicts a={e.authentication} />}
      />
      <div class="detail-grid">
        <div class="detail-main">
          <Card>
            <Tabs
              label="Email content"
              current={tab}
              onChange={setTab}
              tabs={[
                { id: 'preview', label: 'Preview' },
                { id: 'text', label: 'Plain text' },
                { id: 'headers', label: 'Headers' },
              ]}
            />
            <div role="tabpanel" aria-labelledby={`tab-${tab}`} class="tab-panel">
              {tab === 'preview' && (e.html ? <EmailPreview html={e.html} /> : <p class="muted">No HTML part.</p>)}
              {tab === 'text' && (e.text ? <Code wrap>{e.text}</Code> : <p class="muted">No plain-text part.</p>)}
              {tab === 'headers' && (
                <Code>
                  {Object.entries(e.headers)
                    .map(([k, v]) => `${k}: ${v}`)
                    .join('\n')}
                </Code>
              )}
            </div>
          </Card>
        </div>
        <aside class="detail-side">
          <Card>
            <KeyValue
              rows={[
                ['From', e.from],
                ['To', e.to.join(', ')],
                ['Received for', e.received_for.join(', ')],
                ['Received', <Time iso={e.created_at} exact />],
                ['SPF', <Badge value={tone(e.authentication?.spf)} label={e.authentication?.spf ?? 'not checked'} />],
                ['DKIM', <Badge value={tone(e.authentication?.dkim)} label={e.authentication?.dkim ?? 'not checked'} />],
                ['DMARC', <Badge value={tone(e.authentication?.dmarc)} label={e.authentication?.dmarc ?? 'not checked'} />],
                ['Source', <a href={e.raw.download_url}>Download .eml</a>],
                [
                  'Attachments',
                  e.attachments.length ? (
                    <ul class="plain">
                      {e.attachments.map((a) => (
                        <li>
                          {a.filename ?? '(unnamed)'} <span class="muted small">{bytes(a.size)}</span>
                        </li>
                      ))}
                    </ul>
                  ) : null,
                ],
              ]}
            />
          </Card>
        </aside>
      </div>
    </>
  );
}
