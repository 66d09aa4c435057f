import { readdir, readFile, writeFile } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import { autogroupNice, findEngineProcesses } from '../../src/cli/engine-priority.js';

/**
 * `serve --tenants` lowers the local engine's priority (--engine-nice,
 * default 10). The suite's engine serves every test at once, and the
 * suite's processes share one session group (autogroup) that a lowered
 * engine would yield to: container starts would wait behind the whole
 * suite. So the suite's servers leave the engine as it is
 * (`--engine-nice 0`) unless a test names the flag itself.
 */
export function withSuiteEngineArgs(args: readonly string[]): string[] {
  if (!args.includes('serve') || !args.includes('--tenants') || args.includes('--engine-nice') || args.includes('--help')) return [...args];
  return [...args, '--engine-nice', '0'];
}

/**
 * The engine's priority as a test or bench found it, to put back when it
 * ends: a bench that compares BENCH_ENGINE_NICE values side by side (or a
 * test run after it) must not inherit the engine the last run lowered. Each
 * engine process's threads get the nice their kind had (a shim started
 * meanwhile, containerd's), and each session group (autogroup) its own.
 */
export async function rememberEnginePriority(): Promise<() => Promise<void>> {
  const threadNice = new Map<string, number>();
  const groupNice = new Map<number, string>();
  for (const { pid, name } of await findEngineProcesses()) {
    const kind = name.startsWith('containerd-shim') ? 'containerd' : name;
    if (!threadNice.has(kind)) threadNice.set(kind, safely(() => getPriority(pid)) ?? 0);
    const line = await readFile(`/proc/${pid}/autogroup`, 'utf8').catch(() => '');
    if (line !== '') groupNice.set(pid, String(autogroupNice(line)));
  }
  return async () => {
    for (const { pid, name } of await findEngineProcesses()) {
      const nice = threadNice.get(name.startsWith('containerd-shim') ? 'containerd' : name);
      if (nice === undefined) continue;
      for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) safely(() => setPriority(Number(tid), nice));
      const group = groupNice.get(pid);
      if (group !== undefined) await writeFile(`/proc/${pid}/autogroup`, group).catch(() => undefined);
    }
  };
}

function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined; // a thread that ended meanwhile
  }
}
