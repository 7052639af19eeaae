// The block editor, loaded when a page first shows it: TipTap and ProseMirror are a chunk of their
// own (src/dashboard/bundle.ts splits the bundle), so pages without the editor do not load them.
import { chunk } from '../chunk';
import { ErrorBox, Loading } from '../ui';
import type { BlockEditorProps } from './block-editor';

const useEditor = chunk(() => import('./block-editor'));

export function LazyBlockEditor(props: BlockEditorProps) {
  const { mod, error } = useEditor();
  if (error) return <ErrorBox error={{ message: `The editor could not be loaded: ${error.message}` }} />;
  if (!mod) return <Loading />;
  return <mod.BlockEditor {...props} />;
}
