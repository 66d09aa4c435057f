import { spawn } from 'node:child_process';
import { manager, STACK, type ClusterContext } from '../context.js';

/**
 * The service's log lines since `since`, read with --follow until `enough` says so or `ms` pass.
 * Without --follow, `docker service logs` on engine 20.10 has waited past a minute here for tasks
 * whose containers were gone (the task history of earlier checks); following streams every
 * running task's lines at once.
 */
export function followServiceLog(context: ClusterContext, service: string, since: Date, enough: (lines: string[]) => boolean, ms: number): Promise<string[]> {
  return new Promise((resolve) => {
    const child = spawn(
      'docker',
      ['-H', `unix://${manager(context).socket}`, 'service', 'logs', '--raw', '--follow', '--since', since.toISOString(), `${STACK}_${service}`],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let text = '';
    const finish = () => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(text.split('\n'));
    };
    const timer = setTimeout(finish, ms);
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (enough(text.split('\n'))) finish();
    });
    child.on('close', finish);
  });
}
