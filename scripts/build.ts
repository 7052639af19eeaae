#!/usr/bin/env bun
/**
 * Build Posthorn into ONE self-contained executable: `npm run build` → dist/posthorn.
 *
 *   bun scripts/build.ts [--entry <file>] [--outfile <file>] [--no-bytecode]
 *   (or POSTHORN_BUILD_ENTRY / POSTHORN_BUILD_OUTFILE; argv wins)
 *
 * Why a script and not `bun build --compile`: lmdb and msgpackr-extract find their native addon at
 * run time with `node-gyp-build-optional-packages`, which searches the filesystem. Inside a compiled
 * binary that search fails ("No native build was found … abi=unsupported"). Bun only embeds a
 * `.node` file when it is `require`d by a static path, so a bundler plugin (the CLI takes none)
 * rewrites the loaders into static requires, and inlines lmdb's compression dictionary, which lmdb
 * reads from disk next to its sources. Every rewrite is checked: if a dependency bump changes the
 * code we patch, the build fails here instead of producing a binary that dies at start.
 *
 * The addons are the linux-x64 glibc N-API builds, so this builds for the host and refuses to run
 * anywhere else. At start the binary unpacks the addons into $TMPDIR (must be writable + exec).
 */
import type { BunPlugin } from 'bun';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '..');

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

function parseArgs(argv: string[]): { entry: string; outfile: string; bytecode: boolean } {
  let bytecode = true;
  let entry = process.env.POSTHORN_BUILD_ENTRY || 'src/main.ts';
  let outfile = process.env.POSTHORN_BUILD_OUTFILE || 'dist/posthorn';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (!v) fail(`${flag} needs a value`);
      return v;
    };
    if (flag === '--entry') entry = value();
    else if (flag === '--outfile') outfile = value();
    else if (flag === '--no-bytecode') bytecode = false;
    else if (flag === '-h' || flag === '--help') {
      console.log('usage: bun scripts/build.ts [--entry src/main.ts] [--outfile dist/posthorn] [--no-bytecode]');
      process.exit(0);
    } else fail(`unknown argument: ${arg}`);
  }
  // Relative paths are relative to the repository root, whatever the caller's cwd.
  return { entry: resolve(ROOT, entry), outfile: resolve(ROOT, outfile), bytecode };
}

/**
 * Static files embedded into the executable (compile.assets: reachable at run time via node:fs /
 * Bun.file relative to import.meta.dir). The dashboard (`web/`) goes here when it is wired in.
 */
const EMBEDDED_ASSETS: string[] = [
  // 'web',
];

// ---------------------------------------------------------------------------------------------
// Native-addon plugin
// ---------------------------------------------------------------------------------------------

class BuildError extends Error {}

function fail(message: string): never {
  throw new BuildError(message);
}

/** Replace exactly one occurrence of `pattern` in `source`, or fail the build naming the file. */
function rewriteOnce(file: string, source: string, what: string, pattern: RegExp | string, replacement: string): string {
  const matches = typeof pattern === 'string' ? source.split(pattern).length - 1 : [...source.matchAll(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g'))].length;
  if (matches !== 1) {
    fail(
      `native-addon rewrite "${what}" expected exactly 1 match in ${relative(ROOT, file)}, found ${matches}.\n` +
        `  pattern: ${String(pattern)}\n` +
        `  A dependency update probably changed this code: inspect the file and update scripts/build.ts.`,
    );
  }
  // A function replacement, so `$` sequences in the replacement are taken literally.
  return source.replace(pattern, () => replacement);
}

function readJson(file: string): any {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * Locate `<pkg>/<file>` as resolved from `fromDir` (the way the bundler would), and check that the
 * platform package has the same version as the package that loads it (a mismatched addon would
 * load but misbehave).
 */
function platformAddon(fromDir: string, pkg: string, file: string, expectVersion: string): string {
  let pkgJson: string;
  try {
    pkgJson = createRequire(join(fromDir, 'package.json')).resolve(`${pkg}/package.json`);
  } catch {
    fail(`cannot resolve ${pkg} from ${relative(ROOT, fromDir)}: run \`npm ci\` on linux-x64 (glibc)`);
  }
  const version = readJson(pkgJson).version;
  if (version !== expectVersion) fail(`${pkg}@${version} does not match its loader's version ${expectVersion} (${relative(ROOT, pkgJson)})`);
  const addon = join(dirname(pkgJson), file);
  if (!existsSync(addon)) fail(`native addon missing: ${relative(ROOT, addon)}`);
  return addon;
}

type Rewrite = (file: string, source: string) => string;

function lmdbRewrites(lmdbDir: string): { native: Rewrite; open: Rewrite; cjs: Rewrite } {
  const version = readJson(join(lmdbDir, 'package.json')).version;
  const addon = platformAddon(lmdbDir, '@lmdb/lmdb-linux-x64', 'node.napi.glibc.node', version);
  const dictFile = join(lmdbDir, 'dict', 'dict.txt');
  if (!existsSync(dictFile)) fail(`lmdb compression dictionary missing: ${relative(ROOT, dictFile)}`);
  // Fresh Buffer per call, like the readFileSync it replaces (lmdb hands it to native code).
  const dictExpr = `Buffer.from(${JSON.stringify(readFileSync(dictFile).toString('base64'))}, 'base64')`;
  const addonRequire = `require(${JSON.stringify(addon)})`;

  // fs.readFileSync(new URL('./dict/dict.txt', <base URL expression>.replace(/dist[\\\/]index.cjs$/, '')))
  // In open.js the base is `import.meta.url`; in dist/index.cjs it is rollup's long
  // `(typeof document === 'undefined' ? … : …)` expression. Both end with the same .replace(…).
  const dictRead = (base: string) =>
    new RegExp(
      String.raw`fs\.readFileSync\(\s*new URL\(\s*'\./dict/dict\.txt',\s*` +
        base +
        String.raw`\.replace\(/dist\[\\\\\\/\]index\.cjs\$/, ''\),?\s*\),?\s*\)`,
    );

  return {
    // ESM loader (what `import 'lmdb'` resolves to under Bun: node-index.js → native.js).
    native: (file, src) => {
      src = rewriteOnce(file, src, 'drop node-gyp-build import', "import loadNAPI from 'node-gyp-build-optional-packages';\n", '');
      return rewriteOnce(file, src, 'static addon require', 'export let nativeAddon = loadNAPI(dirName);', `export let nativeAddon = ${addonRequire};`);
    },
    open: (file, src) => rewriteOnce(file, src, 'inline dict/dict.txt', dictRead(String.raw`import\.meta\.url`), dictExpr),
    // CommonJS build (what `require('lmdb')` resolves to).
    cjs: (file, src) => {
      src = rewriteOnce(file, src, 'drop node-gyp-build require', "var loadNAPI = require('node-gyp-build-optional-packages');\n", '');
      src = rewriteOnce(file, src, 'drop node-gyp-build interop', 'var loadNAPI__default = /*#__PURE__*/_interopDefaultLegacy(loadNAPI);\n', '');
      src = rewriteOnce(file, src, 'static addon require', 'let nativeAddon = loadNAPI__default["default"](dirName);', `let nativeAddon = ${addonRequire};`);
      return rewriteOnce(file, src, 'inline dict/dict.txt', dictRead(String.raw`\(typeof document === 'undefined' \?[^\n]*?\)`), dictExpr);
    },
  };
}

function msgpackrExtractRewrite(pkgDir: string): Rewrite {
  const version = readJson(join(pkgDir, 'package.json')).version;
  const addon = platformAddon(pkgDir, '@msgpackr-extract/msgpackr-extract-linux-x64', 'node.napi.glibc.node', version);
  return (file, src) =>
    rewriteOnce(
      file,
      src,
      'static addon require',
      "module.exports = require('node-gyp-build-optional-packages')(__dirname);",
      `module.exports = require(${JSON.stringify(addon)});`,
    );
}

const SEP = String.raw`[\\/]`;
const NM = String.raw`${SEP}node_modules${SEP}`;

function nativeAddonPlugin(): BunPlugin {
  // Rewrites are keyed by path: a nested second copy of a package gets its own (checked) rewrite.
  const rules: Array<{ filter: RegExp; make: (pkgDir: string) => Rewrite }> = [
    { filter: new RegExp(`${NM}lmdb${SEP}native\\.js$`), make: (d) => lmdbRewrites(d).native },
    { filter: new RegExp(`${NM}lmdb${SEP}open\\.js$`), make: (d) => lmdbRewrites(d).open },
    { filter: new RegExp(`${NM}lmdb${SEP}dist${SEP}index\\.cjs$`), make: (d) => lmdbRewrites(d).cjs },
    { filter: new RegExp(`${NM}msgpackr-extract${SEP}index\\.js$`), make: (d) => msgpackrExtractRewrite(d) },
  ];
  const pkgDirOf = (file: string) => resolve(dirname(file), file.match(/dist[\\/]index\.cjs$/) ? '..' : '.');

  // Preflight on the installed copies, so every pattern is checked on every build, including
  // files the current entry point happens not to load (e.g. lmdb's CommonJS build).
  const lmdbDir = join(ROOT, 'node_modules', 'lmdb');
  const mpeDir = join(ROOT, 'node_modules', 'msgpackr-extract');
  for (const [rule, file] of [
    [rules[0]!, join(lmdbDir, 'native.js')],
    [rules[1]!, join(lmdbDir, 'open.js')],
    [rules[2]!, join(lmdbDir, 'dist', 'index.cjs')],
    [rules[3]!, join(mpeDir, 'index.js')],
  ] as const) {
    if (!existsSync(file)) fail(`expected ${relative(ROOT, file)} — has the package layout changed? Update scripts/build.ts.`);
    rule.make(pkgDirOf(file))(file, readFileSync(file, 'utf8'));
  }

  return {
    name: 'posthorn-native-addons',
    setup(build) {
      for (const rule of rules) {
        build.onLoad({ filter: rule.filter }, (args) => {
          const contents = rule.make(pkgDirOf(args.path))(args.path, readFileSync(args.path, 'utf8'));
          return { contents, loader: 'js' };
        });
      }
      // Catch-all: after the rewrites nothing may still pull in the run-time addon finder. If this
      // fires, some package loads a native addon in a way this script does not rewrite yet.
      build.onLoad({ filter: new RegExp(`${NM}node-gyp-build(-optional-packages)?${SEP}`) }, (args) => {
        fail(
          `${relative(ROOT, args.path)} is being bundled: a native addon is still located at run time, which ` +
            `cannot work in a compiled binary. Add a static-require rewrite for its user to scripts/build.ts.`,
        );
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Build
// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { entry, outfile, bytecode } = parseArgs(process.argv.slice(2));
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(`this build embeds the linux-x64 glibc addons of lmdb/msgpackr-extract; host is ${process.platform}-${process.arch}`);
  }
  if (!existsSync(entry)) fail(`entry point not found: ${entry}`);
  for (const asset of EMBEDDED_ASSETS) if (!existsSync(join(ROOT, asset))) fail(`asset to embed not found: ${asset}`);
  mkdirSync(dirname(outfile), { recursive: true });

  console.log(`posthorn build: ${relative(ROOT, entry) || entry} → ${outfile} (bun ${Bun.version})`);
  const started = performance.now();
  const result = await Bun.build({
    entrypoints: [entry],
    root: ROOT,
    target: 'bun',
    format: 'esm',
    // Precompiled bytecode: measured ~1/3 faster start for an lmdb+msgpackr probe (22 vs 33 ms).
    bytecode,
    sourcemap: 'linked', // embedded in the binary: stack traces point at src/… lines
    minify: { whitespace: true, syntax: true, identifiers: false },
    plugins: [nativeAddonPlugin()],
    throw: false,
    compile: {
      outfile,
      // An appliance must not pick up a stray .env / bunfig.toml / tsconfig / package.json from
      // whatever directory it is started in.
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
      ...(EMBEDDED_ASSETS.length ? { assets: EMBEDDED_ASSETS.map((a) => join(ROOT, a)) } : {}),
    },
  });

  for (const log of result.logs) {
    const where = log.position ? ` (${log.position.file}:${log.position.line}:${log.position.column})` : '';
    (log.level === 'error' ? console.error : console.warn)(`${log.level}: ${log.message}${where}`);
  }
  if (!result.success) fail('Bun.build failed (see messages above)');
  if (!existsSync(outfile)) fail(`Bun.build reported success but ${outfile} does not exist`);
  // The source map is embedded in the executable (stack traces show src/… lines); Bun also writes
  // a copy next to it, which the one-file deliverable does not need.
  for (const out of result.outputs) if (out.kind === 'sourcemap' && out.path !== outfile) rmSync(out.path, { force: true });

  const size = statSync(outfile).size;
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`built ${outfile} — ${(size / 1024 / 1024).toFixed(1)} MB (${size} bytes) in ${secs} s`);
}

try {
  await main();
} catch (error) {
  if (error instanceof BuildError) console.error(`\nBUILD FAILED: ${error.message}`);
  else if (error instanceof AggregateError) {
    console.error('\nBUILD FAILED:');
    for (const e of error.errors) console.error(`  ${e?.message ?? e}`);
  } else console.error('\nBUILD FAILED:', error);
  process.exit(1);
}
