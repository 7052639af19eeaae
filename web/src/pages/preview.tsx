// An email's HTML in a sandboxed frame: no scripts, no same-origin access, and no remote images
// until asked for (they tell the sender the message was opened, and where from).
import { useState } from 'preact/hooks';

const BLOCKED = "default-src 'none'; img-src data: cid:; style-src 'unsafe-inline'; font-src data:";
const ALLOWED = "default-src 'none'; img-src data: cid: https: http:; style-src 'unsafe-inline' https:; font-src data: https:";

/** `height`: pixels, or any CSS length (the template editor's fills the window beside its fields); `title` tells several frames of a page apart. */
export function EmailPreview({ html, height = 520, title = 'Email preview' }: { html: string; height?: number | string; title?: string }) {
  const [remote, setRemote] = useState(false);
  const hasRemote = /<img[^>]+src\s*=\s*["']?https?:/i.test(html) || /url\(\s*["']?https?:/i.test(html);
  const doc = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${remote ? ALLOWED : BLOCKED}"><base target="_blank">${html}`;
  return (
    <div class="preview">
      {hasRemote && (
        <div class="preview-bar">
          <span class="small muted">{remote ? 'Remote images are shown.' : 'Remote images are hidden.'}</span>
          <button type="button" class="btn small" onClick={() => setRemote(!remote)}>
            {remote ? 'Hide remote images' : 'Show remote images'}
          </button>
        </div>
      )}
      <iframe title={title} sandbox="" srcDoc={doc} style={{ height: typeof height === 'number' ? `${height}px` : height }} />
    </div>
  );
}
