import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { ExternalEditor } from '../../scheduler/confirmation-flow.js';

export interface ExternalEditorOptions {
  env?: NodeJS.ProcessEnv;
  /** Called before the editor starts: the chat stops drawing and reading keys. */
  suspendTerminal: () => void;
  /** Called once the editor has exited. */
  resumeTerminal: () => void;
  /** Told when the editor could not run or failed (the proposal is then left as it was). */
  onError?: (message: string) => void;
}

/** The editor command: $VISUAL, then $EDITOR, then vi. */
export function editorCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.VISUAL?.trim() || env.EDITOR?.trim() || 'vi';
}

/**
 * The scheduler's `editor` for `modify_with_editor`: writes the proposed
 * content to a private temp file named like the target (so editors pick the
 * right syntax), hands the terminal to $VISUAL/$EDITOR (a command line, run by
 * /bin/sh, so `code --wait` works), and returns the saved content. A failing
 * editor or an abort returns null: nothing changes.
 */
export function createExternalEditor(options: ExternalEditorOptions): ExternalEditor {
  const env = options.env ?? process.env;
  return async ({ filePath, proposedContent, signal }) => {
    const dir = await mkdtemp(join(tmpdir(), 'toolcell-edit-'));
    const file = join(dir, basename(filePath) || 'proposal.txt');
    await writeFile(file, proposedContent, { mode: 0o600 });
    options.suspendTerminal();
    try {
      const result = await runEditor(editorCommand(env), file, env, signal);
      if (result !== 0) {
        options.onError?.(
          `The editor (${editorCommand(env)}) ${result === 'aborted' ? 'was stopped' : `exited with ${String(result)}`}; the proposal is unchanged.`,
        );
        return null;
      }
      return await readFile(file, 'utf8');
    } catch (error) {
      options.onError?.(`Cannot run the editor (${editorCommand(env)}): ${(error as Error).message}`);
      return null;
    } finally {
      options.resumeTerminal();
      await rm(dir, { recursive: true, force: true });
    }
  };
}

function runEditor(command: string, file: string, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number | string> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve('aborted');
    const child = spawn('/bin/sh', ['-c', `${command} "$1"`, 'toolcell-editor', file], { stdio: 'inherit', env });
    const onAbort = () => child.kill('SIGTERM');
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('exit', (code, exitSignal) => {
      signal.removeEventListener('abort', onAbort);
      resolve(signal.aborted ? 'aborted' : (code ?? `signal ${exitSignal ?? 'unknown'}`));
    });
  });
}
