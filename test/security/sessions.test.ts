/**
 * Sessions are isolated from each other: one session never sees another's
 * /tmp, processes or workspace, and cannot signal them. Inside one session,
 * commands share a user, so they can see and signal each other: that is by
 * design and SECURITY.md says so; this file pins both facts down.
 */
import anyTest from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
  t.regex(look.output, /pkill=1/, 'no process matched in bob\'s session');

  const [aliceId = ''] = await alice.containerIds();
  const [bobId = ''] = await bob.containerIds();
  t.not(aliceId, bobId, 'each session has its own container');
  t.true((await commandProcesses(aliceId)).some((row) => row.includes(seconds)), "alice's job still runs");
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
