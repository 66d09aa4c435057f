/**
 * What the CLI loads to start: a command loads its own module, not every
 * command's (the hosting server's, the chat screen's), `--version` loads
 * none, and a run without MCP servers never loads the MCP SDK. Counted by a
 * module loader hook that records each module Node loads, so these hold
 * without timing anything (bench/cli-start measures the time).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliPath } from '../helpers/cli.js';

/** The URLs of the ES modules the CLI loaded for `args`. */
function modulesLoaded(args: string[], stdin = ''): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-start-up-'));
  try {
    const log = join(dir, 'loaded.txt');
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }`,
    );
    const register = join(dir, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const result = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, cliPath, ...args], { cwd: dir, input: stdin, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`toolcell ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const commandModules = (loaded: string[]): string[] =>
  loaded.filter((url) => /\/dist\/src\/cli\/commands\//.test(url)).map((url) => url.replace(/.*\/commands\//, ''));

test('--version loads no command', (t) => {
  t.deepEqual(commandModules(modulesLoaded(['--version'])), []);
});

test("a command loads its own module, not the hosting server's or the chat screen's", (t) => {
  const loaded = modulesLoaded(['exec', '--help']);
  t.deepEqual(commandModules(loaded), ['exec.js']);
  t.false(
    loaded.some((url) => /\/dist\/src\/(hosting|ui\/chat)\//.test(url)),
    loaded.filter((url) => /\/dist\/src\/(hosting|ui\/chat)\//.test(url)).join('\n'),
  );
});

test('a run without MCP servers loads no MCP SDK, and no HTML parser before a page is fetched', (t) => {
  const loaded = modulesLoaded(['exec', '--sandbox', 'none'], '[]');
  t.true(commandModules(loaded).includes('exec.js'));
  for (const heavy of ['@modelcontextprotocol/sdk', 'htmlparser2']) {
    t.false(
      loaded.some((url) => url.includes(`/node_modules/${heavy}/`)),
      heavy,
    );
  }
});

test('--help still lists every command', (t) => {
  const help = spawnSync(process.execPath, [cliPath, '--help'], { encoding: 'utf8' }).stdout;
  for (const name of ['tools', 'exec', 'sandbox', 'mcp', 'serve', 'tenant', 'run', 'chat', 'policy', 'hosting'])
    t.regex(help, new RegExp(`^  ${name} `, 'm'), name);
});
