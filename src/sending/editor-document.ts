// The dashboard's block editor keeps its document in the HTML it saves, as a trailing comment
// `<!--posthorn-blocks:<base64>-->` (web/src/editor/email-html.ts, docEmbed), so a draft reopens as
// blocks. It is for the editor alone: recipients never get it (a few KB of every message).
const MARK = '<!--posthorn-blocks:';
const EMBED = /<!--posthorn-blocks:[A-Za-z0-9+/=]*-->\s*/;

/** `html` as sent: without the block editor's document. */
export function withoutEditorDocument(html: string): string {
  return html.includes(MARK) ? html.replace(EMBED, '') : html;
}
