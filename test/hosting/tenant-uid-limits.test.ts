/**
 * Tenants do not share the kernel's per-user budgets: every tenant's
 * commands run as a uid of its own, its workspace (a loop-mounted disk, or
 * its default folder) belongs to that uid, and what its file tools create
 * too. Tenant A, through a real hosting server and the MCP SDK client,
 * exhausts each budget the kernel keeps per uid and holds it: inotify
 * instances (fs.inotify.max_user_instances), POSIX message queue bytes
 * (RLIMIT_MSGQUEUE against the uid's total), pipe buffers
 * (fs.pipe-user-pages-soft) and queued signals (RLIMIT_SIGPENDING against
 * the uid's total); A itself then gets nothing more, and tenant B gets each
 * at once. With one uid for both (uid 10001 before; uid 0 if the tenant's
 * uid were not passed), B's probes fail. RLIMIT_NPROC is not set on
 * sandboxes (each container's pids limit bounds its processes), so there is
 * no per-uid process count to share.
 */
import anyTest from 'ava';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PrepareWorkspace } from '../../src/hosting/tenants/tenant-workspace.js';
import { folderWorkspace } from '../../src/hosting/tenants/tenant-workspace.js';
import { readTenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting } from '../helpers/hosting.js';
import { MiB, TenantDisks, canMount } from '../helpers/tenant-disks.js';

const test = (await requireDocker(anyTest, 'hosting/tenant-uid-limits')).serial;

/**
 * Takes one of each budget (`probe`), or all it can and holds them
 * (`exhaust`: writes exhausted.json, then sleeps). Prints, or writes, for
 * each budget how many it got and the error that stopped it.
 */
const BUDGETS = String.raw`
import ctypes, ctypes.util, fcntl, json, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL(ctypes.util.find_library("rt") or "librt.so.1", use_errno=True)
mode = sys.argv[1]
cap = 1 if mode == "probe" else 1_000_000
held, out = [], {}
def take(name, one):
    made = 0
    while made < cap:
        try:
            one(made)
        except OSError as error:
            out[name] = {"made": made, "error": error.strerror}
            return
        made += 1
    out[name] = {"made": made}
def check(result):
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result
def inotify(n):
    held.append(check(libc.inotify_init1(0)))
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]
def mqueue(n):
    name = ("/%s-%d-%d" % (mode, os.getpid(), n)).encode()
    held.append(check(rt.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(Attr(0, 10, 8192, 0)))))
    rt.mq_unlink(name)  # the queue and its bytes stay while the descriptor is open
def pipe(n):
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: 256 pages
    except OSError:
        os.close(r)
        os.close(w)
        raise
    held.extend((r, w))
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
def queued(n):
    check(libc.sigqueue(os.getpid(), int(signal.SIGRTMIN), ctypes.c_void_p(0)))
take("inotify", inotify)
take("mqueue", mqueue)
take("pipes", pipe)
take("signals", queued)
text = json.dumps(out, sort_keys=True)
if mode == "probe":
    print(text)
else:
    with open("exhausted.tmp", "w") as f:
        f.write(text)
    os.rename("exhausted.tmp", "exhausted.json")
    # While the budgets were taken, other processes of this uid held some for
    # a moment (a shell's SIGCHLD pending until it is reaped counts as a
    # queued signal): take back what they give up, so the budgets stay full.
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        for one in (inotify, mqueue, pipe, queued):
            try:
                one(-1)
            except OSError:
                pass
        time.sleep(0.02)
`;

interface Budget {
  made: number;
  error?: string;
}
type Budgets = Record<'inotify' | 'mqueue' | 'pipes' | 'signals', Budget>;

const EXHAUSTED: Record<keyof Budgets, RegExp> = {
  inotify: /Too many open files/,
  mqueue: /Too many open files/,
  pipes: /Operation not permitted/,
  signals: /Resource temporarily unavailable/,
};

function parse(text: string): Budgets {
  const json = /\{"inotify".*\}/.exec(text)?.[0];
  if (json === undefined) throw new Error(`no budgets in: ${text.slice(0, 500)}`);
  return JSON.parse(json) as Budgets;
}

test('tenant A holding every per-uid kernel budget (inotify, message queues, pipe buffers, queued signals) leaves tenant B its own; each tenant runs as its uid and owns its workspace', async (t) => {
  t.timeout(300_000);
  if (!canMount(t)) return; // a tenant's uid needs a root server (and A's workspace is a loop-mounted disk)
  const dir = await hostingFolder(t, 'toolcell-hosting-uids-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const keys = { alpha: await addTenant(file, 'alpha'), beta: await addTenant(file, 'beta') };
  const tenants = (await readTenantsFile(file))!.tenants;
  const uids = { alpha: tenants['alpha']!.uid!, beta: tenants['beta']!.uid! };
  t.not(uids.alpha, uids.beta, 'tenant add gives each tenant a uid of its own');

  // As `toolcell serve` does as root: alpha on a capped disk, beta in its default folder.
  const disks = await TenantDisks.open({ dataDir });
  t.teardown(() => disks.releaseAll());
  const folders = folderWorkspace({ dataDir, workspaceOf: () => undefined });
  const prepareWorkspace: PrepareWorkspace = (tenant, limits, owner) =>
    tenant === 'alpha' ? disks.prepare(tenant, { diskBytes: 64 * MiB }, owner) : folders(tenant, limits, owner);
  const hosting = await startHosting({ tenantsFile: file, dataDir, prepareWorkspace });
  t.teardown(() => hosting.close());
  const alpha = await connectTenant(t, hosting.server.url, keys.alpha);
  const beta = await connectTenant(t, hosting.server.url, keys.beta);

  for (const [name, client] of [
    ['alpha', alpha],
    ['beta', beta],
  ] as const) {
    const who = await call(client.client, 'run_shell_command', {
      command: 'echo made > made.txt; echo "who=$(id -u) $(id -g) $(stat -c %u:%g .) $(stat -c %u:%g made.txt)"',
    });
    const id = uids[name];
    t.regex(who.text, new RegExp(`who=${id} ${id} ${id}:${id} ${id}:${id}\\n`), `${name}: its uid and gid, its workspace, what it creates`);
    // A file its file tools write belongs to it too, so its commands can change it.
    t.is((await call(client.client, 'write_file', { file_path: 'from-tool.txt', content: 'tool\n' })).errorType, undefined);
    const edited = await call(client.client, 'run_shell_command', { command: 'echo shell >> from-tool.txt && cat from-tool.txt && stat -c %u from-tool.txt' });
    t.regex(edited.text, new RegExp(`tool\\nshell\\n${uids[name]}`), `${name}: ${edited.text}`);
  }
  const alphaRoot = (await disks.prepare('alpha', {}, { uid: uids.alpha, gid: uids.alpha })).path;
  t.is((await stat(alphaRoot)).uid, uids.alpha, "alpha's disk belongs to alpha's uid on the host");

  await call(alpha.client, 'write_file', { file_path: 'budgets.py', content: BUDGETS });
  const started = await call(alpha.client, 'run_shell_command', { command: 'python3 budgets.py exhaust', is_background: true });
  t.is(started.errorType, undefined, started.text);
  let held: Budgets | undefined;
  t.true(
    await eventually(
      async () => {
        const text = (await call(alpha.client, 'run_shell_command', { command: 'cat exhausted.json 2>/dev/null' })).text;
        if (!text.includes('"inotify"')) return false;
        held = parse(text);
        return true;
      },
      120_000,
      500,
    ),
    'alpha took its budgets',
  );
  for (const [budget, error] of Object.entries(EXHAUSTED)) {
    const taken = held![budget as keyof Budgets];
    t.true(taken.made > 0, `alpha got some ${budget} first: ${JSON.stringify(taken)}`);
    t.regex(taken.error ?? '', error, `alpha ran out of ${budget}`);
  }
  await call(alpha.client, 'write_file', { file_path: 'probe.py', content: BUDGETS });
  const alphaProbe = parse((await call(alpha.client, 'run_shell_command', { command: 'python3 probe.py probe' })).text);
  for (const [budget, error] of Object.entries(EXHAUSTED)) {
    t.regex(alphaProbe[budget as keyof Budgets].error ?? '', error, `while alpha holds them, alpha gets no more ${budget} (the budget is its uid's)`);
  }

  await call(beta.client, 'write_file', { file_path: 'probe.py', content: BUDGETS });
  const betaProbe = parse((await call(beta.client, 'run_shell_command', { command: 'python3 probe.py probe' })).text);
  for (const budget of Object.keys(EXHAUSTED)) {
    t.deepEqual(betaProbe[budget as keyof Budgets], { made: 1 }, `beta gets ${budget} while alpha holds all of its own`);
  }
});
