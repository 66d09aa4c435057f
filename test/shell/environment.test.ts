import test from 'ava';
import { buildShellEnvironment } from '../../src/shell/environment.js';

const hostEnv = { PATH: '/host/bin', HOME: '/home/me', LANG: 'de_DE.UTF-8', AWS_SECRET_ACCESS_KEY: 'secret', GITHUB_TOKEN: 'ghp_x', MY_VAR: 'mine' };

test('host: only the allowlist, with the non-interactive settings', (t) => {
  const env = buildShellEnvironment({ backend: 'host', hostEnv, cols: 100, rows: 40 });
  t.deepEqual(Object.keys(env).sort(), ['COLUMNS', 'GIT_PAGER', 'GIT_TERMINAL_PROMPT', 'HOME', 'LANG', 'LINES', 'PAGER', 'PATH', 'TERM', 'TOOLCELL']);
  t.is(env.PATH, '/host/bin');
  t.is(env.COLUMNS, '100');
  t.is(env.GIT_TERMINAL_PROMPT, '0');
});

test('docker: no host paths; named variables and explicit values pass', (t) => {
  const env = buildShellEnvironment({ backend: 'docker', hostEnv, passEnv: ['MY_VAR', 'UNSET_VAR'], extra: { FOO: 'bar' }, cols: 80, rows: 24 });
  t.is(env.PATH, '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  t.is(env.HOME, '/home/sandbox');
  t.is(env.MY_VAR, 'mine');
  t.is(env.FOO, 'bar');
  t.false('UNSET_VAR' in env);
  t.false(Object.values(env).includes('secret'));
});

test('bad names are TypeErrors naming the option', (t) => {
  t.throws(() => buildShellEnvironment({ backend: 'host', hostEnv, passEnv: ['A-B'], cols: 80, rows: 24 }), { instanceOf: TypeError, message: /passEnv/ });
  t.throws(() => buildShellEnvironment({ backend: 'host', hostEnv, extra: { '': 'x' }, cols: 80, rows: 24 }), { instanceOf: TypeError, message: /env/ });
});
