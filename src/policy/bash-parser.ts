import { createRequire } from 'node:module';
import type { Parser } from 'web-tree-sitter';

let loading: Promise<Parser> | undefined;

/**
 * The tree-sitter parser with the bash grammar, loaded once per process
 * (WebAssembly, no native build: about 50 ms the first time, then shared).
 * The grammar's .wasm ships inside the tree-sitter-bash package; its native
 * install script is never run (package.json allowScripts).
 */
export function loadBashParser(): Promise<Parser> {
  loading ??= (async () => {
    // Imported on first use: commands without policy rules never pay for loading it.
    const { Language, Parser } = await import('web-tree-sitter');
    await Parser.init();
    const wasm = createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
    const parser = new Parser();
    parser.setLanguage(await Language.load(wasm));
    return parser;
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}
