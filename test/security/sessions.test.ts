/**
 * Sessions are isolated from each other: one session never sees another's
 * /tmp, processes or workspace, and cannot signal them. Inside one session,
 * commands share a user, so they can see and signal each other: that is by
 * design and SECURITY.md says so; this file pins both facts down.
 */
import anyTest from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses, dockerText, nonce } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/sessions');
const test = docker.serial;

let alice: SandboxSession;
let bob: SandboxSession;

docker.before(async () => {
  [alice, bob] = await Promise.all([SandboxSession.open({ timeoutSeconds: 20 }), SandboxSession.open({ timeoutSeconds: 20 })]);
});
docker.after.always(async () => {
  await Promise.all([alice?.close(), bob?.close()]);
});

test("one session cannot see another's /tmp files, processes or workspace, nor signal them", async (t) => {
  const secret = nonce('alice-tmp');
  const seconds = `${5000 + Math.floor(Math.random() * 999)}.${Math.floor(Math.random() * 1e6)}`;
  await writeFile(join(alice.workspace, 'alice-only.txt'), secret);
  const planted = await alice.shell(`echo ${secret} > /tmp/alice-secret; chmod 644 /tmp/alice-secret; cat /tmp/alice-secret`);
  t.true(planted.output.includes(secret));
  const job = await alice.shell(`sleep ${seconds}`, { background: true });
  t.is(job.status, 'success', job.output);

  // Bob's own command line must not contain the markers, or ps and pkill would find bob himself.
  const half = (text: string): string => `"${text.slice(0, 4)}""${text.slice(4)}"`;
  const look = await bob.shell(
    `ls -la /tmp; cat /tmp/alice-secret 2>&1; grep -rs ${half(secret)} /tmp /workspace . 2>/dev/null; ps -eo pid,args; pkill -f ${half(seconds)}; echo "pkill=$?"; ls`,
  );
  t.false(look.output.includes(secret), `bob saw alice's data: ${look.output}`);
  t.false(look.output.includes(seconds), "bob saw alice's process");
  t.regex(look.output, /pkill=1/, "no process matched in bob's session");

  const [aliceId = ''] = await alice.containerIds();
  const [bobId = ''] = await bob.containerIds();
  t.not(aliceId, bobId, 'each session has its own container');
  t.true(
    (await commandProcesses(aliceId)).some((row) => row.includes(seconds)),
    "alice's job still runs",
  );
  await alice.assertAlive(t, 'alice');
  await bob.assertAlive(t, 'bob');
});

test('inside one session, commands share one user: a later call can see and end an earlier background job', async (t) => {
  const seconds = `${6000 + Math.floor(Math.random() * 999)}.${Math.floor(Math.random() * 1e6)}`;
  const job = await alice.shell(`sleep ${seconds}`, { background: true });
  t.is(job.status, 'success', job.output);
  const peek = await alice.shell(`pkill -f 'slee[p] ${seconds.replace('.', '[.]')}'; echo "pkill=$?"`);
  t.regex(peek.output, /pkill=0/, 'same-session commands may signal each other (documented)');
  const [aliceId = ''] = await alice.containerIds();
  t.false((await commandProcesses(aliceId)).some((row) => row.includes(seconds)));
  await alice.assertAlive(t);
});

test('closing a session removes its container; no container of it survives', async (t) => {
  const carol = await SandboxSession.open({ timeoutSeconds: 20 });
  const [carolId = ''] = await carol.containerIds();
  t.truthy(carolId);
  await carol.shell('sleep 3000', { background: true });
  await carol.close();
  const all = (await dockerText(['ps', '-a', '-q', '--no-trunc'])).split('\n');
  t.false(all.includes(carolId), 'the container is gone after close');
});

test("sessions of one workspace never see each other's background logs: each container mounts a log folder of its own", async (t) => {
  const dave = await SandboxSession.open({ workspace: alice.workspace, timeoutSeconds: 20 });
  t.teardown(() => dave.close());
  const secret = nonce('alice-log');
  const job = await alice.shell(`echo ${secret}; sleep 600`, { background: true });
  const logPath = /Its output goes to (\S+?)\.?(?:\s|$)/.exec(job.text)?.[1] ?? '';
  t.true(logPath.startsWith(`${alice.workspace}/.toolcell/background/`), job.text);
  let logged = '';
  for (let i = 0; i < 200 && !logged.includes(secret); i++) {
    logged = await readFile(logPath, 'utf8').catch(() => '');
    if (!logged.includes(secret)) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.true(logged.includes(secret), "alice's job logged");

  // Everything dave could try from inside: list, read and append by every path the log could have.
  const relative = logPath.slice(alice.workspace.length + 1);
  const name = basename(logPath);
  const look = await dave.shell(
    `ls -laR /workspace/.toolcell/background; cat ${relative} .toolcell/background/${name} 2>&1; echo planted >> ${relative}; echo planted >> .toolcell/background/${name}; grep -rs "${secret.slice(0, 6)}""${secret.slice(6)}" /workspace 2>/dev/null; echo looked`,
  );
  t.regex(look.output, /looked/);
  t.false(look.output.includes(secret), `dave read alice's log: ${look.output}`);
  const seen = look.output.split('\n').filter((line) => line.includes(name) && !line.includes('No such file or directory'));
  t.deepEqual(seen, [], "dave's listing shows alice's log file");
  t.false((await readFile(logPath, 'utf8')).includes('planted'), "dave appended to alice's log");
  // Dave's own background log works, and alice cannot see it either.
  const own = await dave.shell('echo dave-log-line; sleep 600', { background: true });
  const davePath = /Its output goes to (\S+?)\.?(?:\s|$)/.exec(own.text)?.[1] ?? '';
  t.not(dirname(davePath), dirname(logPath), 'another folder');
  const back = await alice.shell(`ls -A /workspace/.toolcell/background; cat .toolcell/background/${basename(davePath)} 2>&1; echo looked`);
  t.false(back.output.includes('dave-log-line'), back.output);
  await alice.assertAlive(t, 'alice');
  await dave.assertAlive(t, 'dave');
});
