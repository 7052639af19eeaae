// Where a Worker thread's entry file is. From a checkout it is a file beside the code that starts
// it; in the single binary it is an entrypoint of its own that scripts/build.ts embeds, found under
// /$bunfs/root by its path from the repository root (the binary's own module URL is /$bunfs/root/…).

/** The entry to give `new Worker` for `file` (beside `callerUrl`), which is `fromRoot` in the repository. */
export function workerEntry(callerUrl: string, file: string, fromRoot: string): string {
  return callerUrl.startsWith('file:///$bunfs/') ? `/$bunfs/root/${fromRoot}` : new URL(file, callerUrl).href;
}
