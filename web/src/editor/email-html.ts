// The block editor's document (TipTap/ProseMirror JSON, web/src/editor/nodes.ts) as email-safe HTML:
// nested tables, `role="presentation"`, inline styles, a 600px column, an Outlook (MSO) wrapper and
// "bulletproof" buttons — markup Gmail, Outlook and Apple Mail all render. Written here rather than
// with mjml-browser: that build is 1.1 MB minified (350 KB gzip) and needs `cheerio` at load, which
// the browser bundle cannot give it (see the commit that added this file for the figures).
//
// Placeholders are written as the server's `{{{key|fallback}}}` tags (docs/api.md §13.4, §20.3); a
// `{` typed as text is written `&#123;` so that only placeholders inserted as such are tags.
// The document itself rides along in a trailing comment (docEmbed below), so the HTML reopens as blocks.

export interface Mark {
  type: string;
  attrs?: Record<string, unknown>;
}
export interface DocNode {
  type: string;
  attrs?: Record<string, unknown>;
  content?: DocNode[];
  text?: string;
  marks?: Mark[];
}

export const UNSUBSCRIBE_TAG = '{{{RESEND_UNSUBSCRIBE_URL}}}';
const FONT = "-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";
const WIDTH = 600;
const PAD = 24;
const ACCENT = '#4f46e5';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '{': '&#123;', '}': '&#125;' };
/** Text and attribute values, escaped; braces too, so typed text never becomes a placeholder. */
export const esc = (s: unknown) => String(s ?? '').replace(/[&<>"'{}]/g, (c) => ENTITIES[c]!);

/** An http(s) or mailto URL, or a placeholder tag as a whole; anything else (javascript:, data:) is dropped. */
export function safeUrl(u: unknown): string {
  const s = String(u ?? '').trim();
  if (/^\{\{\{[A-Za-z0-9_.]+(\|[^{}]*)?\}\}\}$/.test(s)) return s;
  return /^(https?:|mailto:)/i.test(s) ? esc(s) : '';
}

/** A placeholder tag: the key (letters, digits, `_`, `.`) and an optional fallback without braces. */
export function placeholderTag(name: unknown, fallback?: unknown): string {
  const key = String(name ?? '').replace(/[^A-Za-z0-9_.]/g, '');
  const fb = String(fallback ?? '').replace(/[{}|]/g, '');
  return `{{{${key}${fb ? `|${fb}` : ''}}}}`;
}

const style = (o: Record<string, string | number>) =>
  Object.entries(o)
    .map(([k, v]) => `${k}:${v}`)
    .join(';');

const TEXT = { 'font-family': FONT, 'font-size': '16px', 'line-height': '1.6', color: '#27272a' };
const HEADING: Record<number, string> = { 1: '28px', 2: '22px', 3: '18px' };

function inline(nodes: DocNode[] | undefined): string {
  return (nodes ?? []).map(inlineNode).join('');
}

function inlineNode(n: DocNode): string {
  if (n.type === 'hardBreak') return '<br>';
  if (n.type === 'placeholder') return placeholderTag(n.attrs?.name, n.attrs?.fallback);
  if (n.type !== 'text') return '';
  let out = esc(n.text);
  for (const m of n.marks ?? []) {
    if (m.type === 'bold') out = `<strong>${out}</strong>`;
    else if (m.type === 'italic') out = `<em>${out}</em>`;
    else if (m.type === 'underline') out = `<u>${out}</u>`;
    else if (m.type === 'strike') out = `<s>${out}</s>`;
    else if (m.type === 'code') out = `<code style="font-family:Menlo,Consolas,monospace;font-size:14px;background:#f4f4f5;padding:1px 4px">${out}</code>`;
    else if (m.type === 'link') {
      const href = safeUrl(m.attrs?.href);
      if (href) out = `<a href="${href}" style="color:${ACCENT};text-decoration:underline">${out}</a>`;
    }
  }
  return out;
}

/** One presentation table of full width around `rows` (each a `<tr>`). */
const table = (rows: string, extra = '') =>
  `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="border-collapse:collapse${extra}">${rows}</table>`;
/** A row holding `html` with horizontal padding `pad` and bottom padding. */
const row = (html: string, pad: number, bottom = 16, attrs = '') => `<tr><td${attrs} style="padding:0 ${pad}px ${bottom}px ${pad}px">${html}</td></tr>`;

/** A block as table rows; `pad`: the horizontal padding, `width` the width its content has. */
function block(n: DocNode, pad: number, width: number): string {
  const a = n.attrs ?? {};
  switch (n.type) {
    case 'paragraph':
      return row(`<p style="${style({ margin: 0, ...TEXT })}">${inline(n.content) || '&nbsp;'}</p>`, pad);
    case 'heading': {
      const level = Math.min(3, Math.max(1, Number(a.level) || 1));
      return row(
        `<h${level} style="${style({ margin: 0, ...TEXT, 'font-size': HEADING[level]!, 'line-height': '1.3', 'font-weight': 700, color: '#18181b' })}">${inline(n.content)}</h${level}>`,
        pad,
      );
    }
    case 'bulletList':
    case 'orderedList': {
      const tag = n.type === 'bulletList' ? 'ul' : 'ol';
      const items = (n.content ?? []).map((li) => `<li style="margin:0 0 4px 0">${(li.content ?? []).map(listItemPart).join('')}</li>`).join('');
      return row(`<${tag} style="${style({ margin: 0, 'padding-left': '24px', ...TEXT })}">${items}</${tag}>`, pad);
    }
    case 'blockquote':
      return row(
        table(
          `<tr><td style="border-left:4px solid #e4e4e7;padding:0 0 0 16px">${table((n.content ?? []).map((c) => block(c, 0, width - 20)).join(''))}</td></tr>`,
        ),
        pad,
      );
    case 'image': {
      const src = safeUrl(a.src);
      if (!src) return '';
      const w = width - 2 * pad;
      const img = `<img src="${src}" alt="${esc(a.alt)}" width="${w}" style="display:block;width:100%;max-width:${w}px;height:auto;border:0;outline:none;text-decoration:none">`;
      const href = safeUrl(a.href);
      return row(href ? `<a href="${href}">${img}</a>` : img, pad);
    }
    case 'button': {
      const href = safeUrl(a.href) || '#';
      const align = a.align === 'left' ? 'left' : 'center';
      const color = /^#[0-9a-fA-F]{6}$/.test(String(a.color)) ? String(a.color) : ACCENT;
      // The "bulletproof" button: the colour on the cell (Outlook ignores an <a>'s padding and background).
      const button = `<table role="presentation" cellpadding="0" cellspacing="0" border="0" align="${align}" style="border-collapse:separate"><tr><td align="center" bgcolor="${color}" style="border-radius:6px;background:${color}"><a href="${href}" style="display:inline-block;padding:12px 24px;font-family:${FONT};font-size:16px;font-weight:600;line-height:1.2;color:#ffffff;text-decoration:none;border-radius:6px">${esc(a.label || 'Button')}</a></td></tr></table>`;
      return row(button, pad, 16, ` align="${align}"`);
    }
    case 'horizontalRule':
      return row(table('<tr><td style="border-top:1px solid #e4e4e7;font-size:0;line-height:0;height:1px">&nbsp;</td></tr>'), pad);
    case 'spacer': {
      const h = Math.min(200, Math.max(4, Number(a.height) || 24));
      return `<tr><td height="${h}" style="height:${h}px;font-size:0;line-height:0">&nbsp;</td></tr>`;
    }
    case 'columns': {
      const cols = (n.content ?? []).slice(0, 2);
      const inner = Math.floor((width - 2 * pad) / Math.max(1, cols.length));
      const cells = cols
        .map(
          (c, i) =>
            `<td class="ph-col" width="${inner}" valign="top" style="width:${inner}px;vertical-align:top;padding:0 ${i === 0 ? 8 : 0}px 0 ${i === 0 ? 0 : 8}px">${table((c.content ?? []).map((b) => block(b, 0, inner)).join(''))}</td>`,
        )
        .join('');
      return row(table(`<tr>${cells}</tr>`), pad, 0);
    }
    case 'footer': {
      const text = inline(n.content);
      const small = style({ 'font-family': FONT, 'font-size': '12px', 'line-height': '1.5', color: '#71717a', margin: 0, 'text-align': 'center' });
      return row(
        `<p style="${small}">${text ? `${text}<br>` : ''}<a href="${UNSUBSCRIBE_TAG}" style="color:#71717a;text-decoration:underline">Unsubscribe</a></p>`,
        pad,
        24,
      );
    }
    default:
      return '';
  }
}

function listItemPart(n: DocNode): string {
  if (n.type === 'paragraph') return inline(n.content);
  if (n.type === 'bulletList' || n.type === 'orderedList') {
    const tag = n.type === 'bulletList' ? 'ul' : 'ol';
    return `<${tag} style="margin:4px 0 0 0;padding-left:20px">${(n.content ?? []).map((li) => `<li>${(li.content ?? []).map(listItemPart).join('')}</li>`).join('')}</${tag}>`;
  }
  return '';
}

/** Does the document have a footer (with its unsubscribe link)? */
export const hasFooter = (doc: DocNode) => (doc.content ?? []).some((n) => n.type === 'footer');

/** The email's HTML for `doc`: a centred 600px white column on a grey page, the document embedded at the end. */
export function emailHtml(doc: DocNode, opts: { title?: string } = {}): string {
  // Empty paragraphs at the end (the editor keeps one after the last block to type in) are not content.
  const blocks = [...(doc.content ?? [])];
  while (blocks.length && blocks.at(-1)!.type === 'paragraph' && !blocks.at(-1)!.content?.length) blocks.pop();
  const body = blocks.map((n) => block(n, PAD, WIDTH)).join('');
  return `<!doctype html>
<html lang="en" xmlns="http://www.w3.org/1999/xhtml" xmlns:o="urn:schemas-microsoft-com:office:office">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="x-apple-disable-message-reformatting">
<meta name="color-scheme" content="light">
<title>${esc(opts.title)}</title>
<!--[if mso]><noscript><xml><o:OfficeDocumentSettings><o:PixelsPerInch>96</o:PixelsPerInch></o:OfficeDocumentSettings></xml></noscript><![endif]-->
<style>@media (max-width:620px){.ph-col{display:block!important;width:100%!important;padding:0 0 16px 0!important}}</style>
</head>
<body style="margin:0;padding:0;background:#f4f4f5">
${table(
  `<tr><td align="center" style="padding:24px 12px">
<!--[if mso]><table role="presentation" width="${WIDTH}" cellpadding="0" cellspacing="0" border="0"><tr><td><![endif]-->
${table(`<tr><td height="${PAD}" style="height:${PAD}px;font-size:0;line-height:0">&nbsp;</td></tr>${body}`, `;max-width:${WIDTH}px;background:#ffffff;border-radius:8px`)}
<!--[if mso]></td></tr></table><![endif]-->
</td></tr>`,
  ';background:#f4f4f5',
)}
${docEmbed(doc)}
</body>
</html>
`;
}

// The document in the HTML: one comment holding its JSON in base64 (UTF-8), which can hold
// neither `--` (the end of a comment) nor braces (the server's placeholder tags).
const EMBED = /<!--posthorn-blocks:([A-Za-z0-9+/=]*)-->/;

export function docEmbed(doc: DocNode): string {
  const bytes = new TextEncoder().encode(JSON.stringify(doc));
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return `<!--posthorn-blocks:${btoa(bin)}-->`;
}

/** The document embedded in `html` by emailHtml, or null (HTML written by hand, or a comment broken by an edit). */
export function docFromHtml(html: string | null | undefined): DocNode | null {
  const m = html ? EMBED.exec(html) : null;
  if (!m) return null;
  try {
    const doc = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(m[1]!), (c) => c.charCodeAt(0)))) as DocNode;
    return doc && doc.type === 'doc' && Array.isArray(doc.content) ? doc : null;
  } catch {
    return null;
  }
}
