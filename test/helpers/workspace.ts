import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { AnyToolDefinition, WorkspaceInfo } from '../../src/tools/define-tool.js';
import { createLocalTool } from '../../src/tools/defined-tool.js';
import type { Tool, ToolResult } from '../../src/tools/tool.js';

/** What a temp workspace starts with; paths are relative to the workspace root. */
export interface WorkspaceSpec {
  files?: Record<string, string | Buffer>;
  /** link path → target (absolute, or relative to the link's directory). */
  symlinks?: Record<string, string>;
  directories?: string[];
  /** Files in a sibling folder outside the workspace, e.g. `secret.txt` for symlinks to point at. */
  outsideFiles?: Record<string, string | Buffer>;
}

/**
 * A real temp directory holding a workspace root (`root`) and, beside it, a
 * folder outside the workspace (`outside`). Paths are real (no symlinked
 * /tmp), as WorkspaceInfo requires.
 */
export interface TempWorkspace {
  root: string;
  outside: string;
  info: WorkspaceInfo;
  path(relative: string): string;
  write(relative: string, content: string | Buffer): string;
  read(relative: string): string;
  exists(relative: string): boolean;
  symlink(relative: string, target: string): string;
  mkdir(relative: string): string;
  /** Names in a directory of the workspace (for "no stray temp files" checks). */
  list(relative?: string): string[];
  cleanup(): void;
}

/** Makes a temp workspace; call `cleanup()` (or use `useTempWorkspace`). */
export function createTempWorkspace(spec: WorkspaceSpec = {}): TempWorkspace {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'toolcell-ws-')));
  const root = join(base, 'workspace');
  const outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  const path = (relative: string): string => join(root, relative);
  const write = (relative: string, content: string | Buffer): string => {
    const target = path(relative);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    return target;
  };
  const symlink = (relative: string, target: string): string => {
    const link = path(relative);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(target, link);
    return link;
  };
  const mkdir = (relative: string): string => {
    mkdirSync(path(relative), { recursive: true });
    return path(relative);
  };
  for (const [relative, content] of Object.entries(spec.outsideFiles ?? {})) {
    mkdirSync(dirname(join(outside, relative)), { recursive: true });
    writeFileSync(join(outside, relative), content);
  }
  for (const relative of spec.directories ?? []) mkdir(relative);
  for (const [relative, content] of Object.entries(spec.files ?? {})) write(relative, content);
  for (const [relative, target] of Object.entries(spec.symlinks ?? {})) symlink(relative, target);
  return {
    root,
    outside,
    info: { roots: [root], stateDir: join(root, '.toolcell') },
    path,
    write,
    read: (relative) => readFileSync(path(relative), 'utf8'),
    exists: (relative) => existsSync(path(relative)),
    symlink,
    mkdir,
    list: (relative = '.') => readdirSync(path(relative)).sort(),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** A temp workspace removed when the test ends. */
export function useTempWorkspace(t: ExecutionContext, spec: WorkspaceSpec = {}): TempWorkspace {
  const workspace = createTempWorkspace(spec);
  t.teardown(() => workspace.cleanup());
  return workspace;
}

/** A tool running `definition` in this thread against `workspace`. */
export function localTool(definition: AnyToolDefinition, workspace: TempWorkspace | WorkspaceInfo): Tool<unknown> {
  const info = 'info' in workspace ? workspace.info : workspace;
  return createLocalTool(definition, { workspace: info });
}

/**
 * Validates `params` like the scheduler does, then executes. Fails the test
 * when validation fails (use `tool.validateParams` to test bad params).
 */
export async function runTool(tool: Tool<unknown>, params: unknown, signal: AbortSignal = new AbortController().signal): Promise<ToolResult> {
  const validated = tool.validateParams(params);
  if (!validated.ok) throw new Error(`invalid params: ${validated.error}`);
  return tool.execute(validated.params, signal);
}

/** The text of a result's llmContent (strings and text parts joined). */
export function llmText(result: ToolResult): string {
  const parts = Array.isArray(result.llmContent) ? result.llmContent : [result.llmContent];
  return parts.map((part) => (typeof part === 'string' ? part : (part.text ?? ''))).join('');
}
