import { relative, sep } from 'node:path';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';
import { decodeFileName, joinRawPath } from './file-names.js';
import type { GitignoreFilter } from './gitignore.js';
import { readConfinedDirectory } from './read-directory.js';

/** A regular file found by `walkFiles`. */
export interface WalkedFile {
  /** Relative to the walk's start, `/`-separated; lossy when `validName` is false. */
  relativePath: string;
  /** Relative to the workspace root, `/`-separated; lossy when `validName` is false. */
  rootRelativePath: string;
  /** What to open: a string, or bytes when a name on the way is not UTF-8. */
  path: string | Buffer;
  /** False when some name on the way is not valid UTF-8. */
  validName: boolean;
}

/** Counts of what a walk passed over, for notes to the model. */
export interface WalkReport {
  ignored: number;
  symlinks: number;
  nonUtf8Names: number;
  unreadableDirectories: number;
}

export interface WalkOptions {
  workspace: WorkspaceInfo;
  /** The workspace root that contains `start` (gitignore paths are relative to it). */
  root: string;
  /** Real path of the directory to walk. */
  start: string;
  gitignore?: GitignoreFilter;
  /** Directory names never entered (e.g. `node_modules`). `.git` is always skipped. */
  skipDirectoryNames?: ReadonlySet<string>;
  signal?: AbortSignal;
  /** Filled in as the walk goes. */
  report?: WalkReport;
}

/** A fresh, all-zero WalkReport. */
export function emptyWalkReport(): WalkReport {
  return { ignored: 0, symlinks: 0, nonUtf8Names: 0, unreadableDirectories: 0 };
}

interface PendingDirectory {
  path: string | Buffer;
  relativePath: string;
  validName: boolean;
}

/**
 * Yields the regular files below `start`, depth first, names sorted. Every
 * directory is listed through a verified fd (`readConfinedDirectory`), so
 * the walk cannot be led out of the workspace; symlinks are never followed
 * (as ripgrep does by default), ignored paths are pruned. Files are yielded,
 * not opened: open them with `openConfinedFile`/`readConfinedFile`.
 */
export async function* walkFiles(options: WalkOptions): AsyncGenerator<WalkedFile> {
  const report = options.report ?? emptyWalkReport();
  const startRelative = relative(options.root, options.start).split(sep).join('/');
  const stack: PendingDirectory[] = [{ path: options.start, relativePath: startRelative, validName: true }];
  while (stack.length > 0) {
    options.signal?.throwIfAborted();
    const directory = stack.pop() as PendingDirectory;
    let entries;
    try {
      entries = await readConfinedDirectory(options.workspace, directory.path);
    } catch {
      report.unreadableDirectories += 1;
      continue;
    }
    entries.sort((a, b) => Buffer.compare(a.name, b.name));
    const subdirectories: PendingDirectory[] = [];
    for (const entry of entries) {
      const name = decodeFileName(entry.name);
      if (!name.valid) report.nonUtf8Names += 1;
      const validName = directory.validName && name.valid;
      const relativePath = directory.relativePath === '' ? name.text : `${directory.relativePath}/${name.text}`;
      if (entry.kind === 'symlink') {
        report.symlinks += 1;
        continue;
      }
      if (entry.kind === 'directory') {
        if (name.text === '.git' || options.skipDirectoryNames?.has(name.text)) continue;
        if (await options.gitignore?.isIgnored(relativePath, { directory: true })) {
          report.ignored += 1;
          continue;
        }
        subdirectories.push({ path: joinRawPath(directory.path, entry.name, validName), relativePath, validName });
        continue;
      }
      if (entry.kind !== 'file') continue;
      if (await options.gitignore?.isIgnored(relativePath, { directory: false })) {
        report.ignored += 1;
        continue;
      }
      yield {
        relativePath: startRelative === '' ? relativePath : relativePath.slice(startRelative.length + 1),
        rootRelativePath: relativePath,
        path: joinRawPath(directory.path, entry.name, validName),
        validName,
      };
    }
    stack.push(...subdirectories.reverse());
  }
}
