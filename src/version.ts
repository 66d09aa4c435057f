import { readFileSync } from 'node:fs';
import { packageRoot } from './paths.js';

/** toolcell's version, from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(`${packageRoot}/package.json`, 'utf8')) as { version: string }).version;
