// The dashboard's files, bundled from `web/` by Bun's bundler. From a checkout this runs on the
// first request; `npm run build` runs it at build time and embeds the result in the executable in
// place of this module (scripts/build.ts, "dashboard"), so the binary needs no `web/` folder.
import { join, resolve } from 'node:path';

export interface BuiltFile {
  /** Path under /dashboard/assets/ (hashed names, cacheable for ever). */
  name: string;
  type: string;
  body: Uint8Array;
}

const WEB = resolve(import.meta.dir, '..', '..', 'web');

export async function bundleWeb(): Promise<BuiltFile[]> {
  const result = await Bun.build({
    entrypoints: [join(WEB, 'src', 'main.tsx')],
    target: 'browser',
    format: 'esm',
    minify: true,
    // Split: a page's code loaded with import() (the block editor, web/src/editor/lazy.tsx) is a chunk
    // of its own, fetched when first used, so the entry stays small.
    splitting: true,
    sourcemap: 'none',
    naming: { entry: '[name]-[hash].[ext]', chunk: 'chunk-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
    jsx: { runtime: 'automatic', importSource: 'preact' },
  });
  if (!result.success) throw new Error(`dashboard build failed:\n${result.logs.map(String).join('\n')}`);
  const files: BuiltFile[] = [];
  for (const out of result.outputs) {
    files.push({ name: out.path.replace(/^\.\//, ''), type: out.type, body: new Uint8Array(await out.arrayBuffer()) });
  }
  const icon = Bun.file(join(WEB, 'public', 'icon.svg'));
  files.push({ name: 'icon.svg', type: 'image/svg+xml', body: new Uint8Array(await icon.arrayBuffer()) });
  return files;
}
