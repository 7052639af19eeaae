// Pasting into the block editor: ProseMirror's parser keeps only what the schema knows; this removes
// first what would otherwise leak through as text or attributes (Word's conditional comments, style
// sheets, inline styles and classes).
/** Pasted HTML without styles, classes, scripts, Word's comments and conditional blocks. */
export function cleanPastedHtml(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(style|script|title|xml)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<(meta|link)\b[^>]*>/gi, '')
    .replace(/\s(style|class|id|lang|align|width|height|bgcolor|color|face)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '');
}
