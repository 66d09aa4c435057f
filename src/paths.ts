import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder (where package.json is), whether code runs from
 * dist/ or elsewhere. Non-TypeScript assets (sandbox/, fixtures) resolve from it.
 */
export const packageRoot: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'sandbox'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`toolcell: cannot find the package root above ${start}`);
    dir = parent;
  }
}

/**
 * A compiled worker entry file, named as compiled: workers/<name>.ts is
 * dist/workers/<name>.js, workers/<name>.cts is dist/workers/<name>.cjs.
 */
export function workerEntry(file: string): URL {
  return new URL(`file://${join(packageRoot, 'dist', 'workers', file)}`);
}
