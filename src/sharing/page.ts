// The page of a shared email (docs/api.md §7.10), laid out like the dashboard's email detail:
// subject, sender and recipients, date, the html body, the text, the attachments. Self-contained:
// no script anywhere, no request to another host. The html sits in an iframe with an empty
// `sandbox` (no script, no same-origin access, no forms, no navigation of this page), and the
// page's Content-Security-Policy — which a srcdoc frame inherits — allows nothing but inline
// styles and data: images: remote images would tell their sender the message was looked at (and
// a tracking pixel would count an open).
const escapeHtml = (s: string) => Bun.escapeHTML(s);

export interface SharedEmail {
  subject: string;
  from: string;
  to: string[];
  cc: string[];
  reply_to: string[];
  /** ISO 8601 */
  date: string;
  html: string | null;
  text: string | null;
  attachments: { filename: string | null; content_type: string; size: number; download_url: string }[];
}

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
// Repeated inside the frame's own document: it holds even where a browser does not pass the policy on.
const FRAME_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

const STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;color:#1f2328;background:#f6f8fa;margin:0;padding:32px 16px}' +
  'main{max-width:860px;margin:0 auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:24px}' +
  'h1{font-size:20px;margin:0 0 12px;overflow-wrap:anywhere}h2{font-size:15px;margin:20px 0 8px}' +
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0 0 16px}dt{color:#59636e}dd{margin:0;overflow-wrap:anywhere}' +
  'iframe{display:block;width:100%;height:70vh;border:1px solid #d0d7de;border-radius:6px;background:#fff}' +
  'pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border-radius:6px;padding:12px;margin:0}' +
  'summary{cursor:pointer;margin:16px 0 8px}ul{padding-left:20px}.muted{color:#59636e;font-size:13px}footer{margin-top:24px}';

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const time = (iso: string) => `<time datetime="${escapeHtml(iso)}">${escapeHtml(new Date(iso).toUTCString())}</time>`;

function document(status: number, title: string, body: string): Response {
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CSP,
      // The token is in the URL: never hand it on, keep no copy, let no search engine list it.
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-robots-tag': 'noindex',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    },
  });
}

/** The shared email's page; `expires` (ms) is when its link stops working. */
export function sharedPage(e: SharedEmail, expires: number): Response {
  const subject = e.subject || '(no subject)';
  const row = (label: string, values: string[]) => (values.length ? `<dt>${label}</dt><dd>${values.map(escapeHtml).join(', ')}</dd>` : '');
  const meta = `<dl>${row('From', [e.from])}${row('To', e.to)}${row('Cc', e.cc)}${row('Reply to', e.reply_to)}<dt>Date</dt><dd>${time(e.date)}</dd></dl>`;
  let body: string;
  if (e.html !== null) {
    const doc = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${FRAME_CSP}"><base target="_blank">${e.html}`;
    const remote = /<img[^>]+src\s*=\s*["']?https?:/i.test(e.html) || /url\(\s*["']?https?:/i.test(e.html);
    body =
      `<iframe title="Email content" sandbox="" referrerpolicy="no-referrer" srcdoc="${escapeHtml(doc)}"></iframe>` +
      (remote ? '<p class="muted">Remote images are not shown.</p>' : '') +
      (e.text !== null ? `<details><summary>Plain text</summary><pre>${escapeHtml(e.text)}</pre></details>` : '');
  } else body = e.text !== null ? `<pre>${escapeHtml(e.text)}</pre>` : '<p class="muted">This email has no body.</p>';
  const files = e.attachments.length
    ? '<h2>Attachments</h2><ul>' +
      e.attachments
        .map(
          (a) =>
            `<li><a href="${escapeHtml(a.download_url)}" download>${escapeHtml(a.filename ?? 'attachment')}</a> <span class="muted">${escapeHtml(a.content_type)} · ${size(a.size)}</span></li>`,
        )
        .join('') +
      '</ul>'
    : '';
  const footer = `<footer class="muted">A read-only copy of an email, shared through Posthorn. This link stops working on ${time(new Date(expires).toISOString())}.</footer>`;
  return document(200, subject, `<h1>${escapeHtml(subject)}</h1>${meta}${body}${files}${footer}`);
}

/** A tampered or expired link, or one whose email is gone. */
export function invalidSharePage(): Response {
  return document(404, 'Link not valid', '<h1>Link not valid</h1><p>This link to a shared email is not valid, has expired, or the email no longer exists.</p>');
}
