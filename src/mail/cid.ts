// `cid:` URLs (RFC 2392) of an html body resolved into data: URIs of the parts they name, so the
// html shows its inline images without the rest of the message (a received email's `data_uri`
// format, a shared email's page).

/** What an inline part needs to be found: its Content-ID and type; `files` holds the bytes by part id. */
export interface InlinePart {
  id: string;
  content_type: string;
  content_id: string | null;
}

/**
 * `cid:` references to image parts replaced by data: URIs of their bytes — the rule mailparser
 * applies when it inlines (cid: followed by up to 256 characters other than quotes and spaces).
 * A reference to no image part is left as it is.
 */
export function inlineImages(html: string, parts: InlinePart[], files: Record<string, Uint8Array>): string {
  return html.replace(/\bcid:([^'"\s]{1,256})/g, (match, ref: string) => {
    let id = ref;
    try {
      id = decodeURIComponent(ref); // RFC 2392 §2: a cid URL is URL-encoded
    } catch {}
    const a = parts.find((x) => x.content_id !== null && (x.content_id === ref || x.content_id === id) && /^image\//i.test(x.content_type));
    const bytes = a && files[a.id];
    return a && bytes ? `data:${a.content_type};base64,${Buffer.from(bytes).toString('base64')}` : match;
  });
}
