/**
 * The layer order of src/ is enforced by dependency-cruiser
 * (.dependency-cruiser.cjs, ARCHITECTURE.md): the real tree passes, and a
 * planted upward import or cycle fails with the rule's name.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');
const config = join(root, '.dependency-cruiser.cjs');

function cruise(cwd: string): { status: number | null; output: string } {
  const run = spawnSync(depcruise, ['src', '--config', config], { cwd, encoding: 'utf8', timeout: 100_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** A throwaway tree of `files` (path → source) with the project's compiler settings. */
async function plant(t: import('ava').ExecutionContext, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-layers-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  for (const [path, source] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), source);
  }
  return dir;
}

test('src/ keeps its layer order and has no cycles', (t) => {
  const { status, output } = cruise(root);
  t.is(status, 0, output);
});

test('an import that points up fails, naming the rule', async (t) => {
  const dir = await plant(t, {
    'src/cli/main.ts': 'export const main = 1;\n',
    'src/fs/planted.ts': "import { main } from '../cli/main.js';\nexport const planted = main;\n",
  });
  const { status, output } = cruise(dir);
  t.not(status, 0);
  t.regex(output, /foundations-points-down: src\/fs\/planted\.ts → src\/cli\/main\.ts/);
});

test('a cycle fails, even inside one layer', async (t) => {
  const dir = await plant(t, {
    'src/fs/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
    'src/fs/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
  });
  const { status, output } = cruise(dir);
  t.not(status, 0);
  t.regex(output, /no-cycles/);
});

test('a new top-level folder needs a place in the order', async (t) => {
  const dir = await plant(t, {
    'src/errors.ts': 'export const errors = 1;\n',
    'src/newfolder/thing.ts': "import { errors } from '../errors.js';\nexport const thing = errors;\n",
  });
  const { status, output } = cruise(dir);
  t.not(status, 0);
  t.regex(output, /every-module-in-a-layer/);
});
