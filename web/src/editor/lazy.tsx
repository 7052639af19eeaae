// The block editor, loaded when a page first shows it: TipTap and ProseMirror are a chunk of their
// own (src/dashboard/bundle.ts splits the bundle), so pages without the editor do not load them.
import { useEffect, useState } from 'preact/hooks';
import { settling } from '../api';
import { ErrorBox, Loading } from '../ui';
import type { BlockEditorProps } from './block-editor';

type Module = typeof import('./block-editor');
let loading: Promise<Module> | null = null;

export function LazyBlockEditor(props: BlockEditorProps) {
  const [mod, setMod] = useState<Module | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    loading ??= settling(import('./block-editor'));
    loading.then(setMod, (e: Error) => {
      loading = null;
      setError(e);
    });
  }, []);
  if (error) return <ErrorBox error={{ message: `The editor could not be loaded: ${error.message}` }} />;
  if (!mod) return <Loading />;
  return <mod.BlockEditor {...props} />;
}
