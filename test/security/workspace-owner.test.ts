/**
 * toolcell leaves the user's files as it found them: after shell calls that
 * read and write all over a workspace, every entry that was there has the
 * same owner, group, mode and ACLs (getfacl's dump, byte for byte), and what
 * the commands created belongs to the workspace's owner. Before, a root-owned
 * checkout got `u:10001:rwX` ACL entries on every file and group bits turned
 * to rwx. Both ways a workspace can be owned: by root (commands run as uid 0)
 * and by a regular user (commands run as that uid), each tree holding files
 * of root, of the owner and of strangers, with access and default ACLs.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, makeTempDir } from '../helpers/security.js';
import { UNDER_GVISOR } from '../helpers/test-runtime.js';

const run = promisify(execFile);
const docker = await requireDocker(anyTest, 'security/workspace-owner');
const test = docker.serial;
const hostIsRoot = process.getuid?.() === 0;

/** getfacl (package `acl`) writes the dump compared here; setfacl plants the ACLs. */
async function requireAclTools(t: ExecutionContext): Promise<void> {
  try {
    await run('getfacl', ['--version']);
    await run('setfacl', ['--version']);
  } catch {
    t.fail('getfacl and setfacl are needed (Debian: apt-get install -y acl)');
  }
}

interface Tree {
  root: string;
  owner: { uid: number; gid: number };
}

/**
 * A workspace with files of several owners (only the owner's own when the
 * test is not root: it cannot give files away), modes from 0600 to 4755,
 * access and default ACLs, symlinks and a node_modules.
 */
async function plantTree(t: ExecutionContext, owner: { uid: number; gid: number }): Promise<Tree> {
  const root = await makeTempDir(t, 'toolcell-sec-owner-');
  const mine = (uid: number, gid: number): [number, number] => (hostIsRoot ? [uid, gid] : [owner.uid, owner.gid]);
  const file = async (path: string, mode: number, uid: number, gid: number, content = `${path}\n`): Promise<void> => {
    await writeFile(join(root, path), content);
    await chown(join(root, path), ...mine(uid, gid));
    await chmod(join(root, path), mode);
  };
  const folder = async (path: string, mode: number, uid: number, gid: number): Promise<void> => {
    await mkdir(join(root, path), { recursive: true });
    await chown(join(root, path), ...mine(uid, gid));
    await chmod(join(root, path), mode);
  };
  await folder('src', 0o755, owner.uid, owner.gid);
  await file('src/main.ts', 0o644, owner.uid, owner.gid);
  await file('src/secret.env', 0o600, owner.uid, owner.gid);
  await file('src/run.sh', 0o755, owner.uid, owner.gid);
  await file('src/group-shared.txt', 0o664, owner.uid, 5001);
  await file('root-owned.txt', 0o644, 0, 0);
  await file('root-private.txt', 0o600, 0, 0);
  await file('stranger.txt', 0o640, 5000, 5001);
  await file('stranger-private.txt', 0o600, 5000, 5000);
  await file('setuid-tool', hostIsRoot ? 0o4755 : 0o755, owner.uid, owner.gid);
  await folder('shared', 0o2775, owner.uid, 5001);
  await file('shared/notes.md', 0o664, owner.uid, 5001);
  await folder('sticky', 0o1777, owner.uid, owner.gid);
  await folder('locked', 0o700, 5000, 5000);
  await file('locked/inside.txt', 0o600, 5000, 5000);
  await folder('node_modules/pkg/lib', 0o755, owner.uid, owner.gid);
  for (let i = 0; i < 40; i++) await file(`node_modules/pkg/lib/m${i}.js`, i % 3 === 0 ? 0o755 : 0o644, owner.uid, owner.gid);
  await symlink('../src/main.ts', join(root, 'node_modules/pkg/main-link'));
  await symlink('/etc/passwd', join(root, 'outside-link'));
  // ACLs: named users and groups, masks narrower than the group class, defaults on folders.
  const setfacl = (...args: string[]) => run('setfacl', args);
  await setfacl('-m', 'u:4242:rw,g:5001:r,m::r', join(root, 'src/main.ts'));
  await setfacl('-m', 'u:5000:rwx', join(root, 'src/run.sh'));
  await setfacl('-m', 'u:5000:r', join(root, 'root-owned.txt'));
  await setfacl('-d', '-m', 'u:5000:rwx,g:5001:rx', join(root, 'shared'));
  await setfacl('-m', 'u:5000:rwx', join(root, 'shared'));
  await setfacl('-R', '-m', 'g:5001:rX', join(root, 'node_modules'));
  await chown(root, ...mine(owner.uid, owner.gid));
  await chmod(root, 0o755);
  return { root, owner };
}

/** Owner, group, mode and ACLs of every entry, symlinks included (not followed), as getfacl and find print them. */
async function snapshot(root: string): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  const { stdout: found } = await run('find', ['.', '-path', './.toolcell', '-prune', '-o', '-printf', '%p %U %G %#m %y\n'], { cwd: root, maxBuffer: 1 << 24 });
  for (const line of found.trim().split('\n')) {
    const path = line.slice(0, line.indexOf(' '));
    entries.set(path, line);
  }
  const { stdout: acls } = await run('getfacl', ['-R', '-P', '-n', '.'], { cwd: root, maxBuffer: 1 << 24 });
  for (const block of acls.trim().split('\n\n')) {
    const path = /^# file: (.*)$/m.exec(block)?.[1];
    if (path === undefined || path.startsWith('.toolcell')) continue;
    const key = path === '.' ? '.' : `./${path}`;
    entries.set(key, `${entries.get(key) ?? ''}\n${block}`);
  }
  return entries;
}

/** Shell calls that read everything and write where the owner may. */
const WORK = [
  'ls -laR . > /dev/null; find . -type f -exec cat {} + > /dev/null 2>&1; cat src/*; true',
  'echo appended >> src/main.ts && echo more >> src/group-shared.txt && echo x >> shared/notes.md && touch src/run.sh node_modules/pkg/lib/m1.js',
  'mkdir -p made/deeper && echo new > made/deeper/new.txt && echo top > made-here.txt && cp src/main.ts made/copy.ts && mv made/copy.ts made/moved.ts',
  'echo tmp > shared/created-in-shared.txt; echo s > sticky/mine.txt; rm -f made/moved.ts; git init -q repo 2>/dev/null; ls -la',
];

async function checkUnchanged(t: ExecutionContext, tree: Tree, label: string): Promise<void> {
  const before = await snapshot(tree.root);
  t.true(before.size > 50, `${label}: the tree was planted (${before.size} entries)`);
  const session = await SandboxSession.open({ workspace: tree.root, timeoutSeconds: 30 });
  try {
    const uid = await session.shell('id -u; id -g');
    t.deepEqual(uid.output.trim().split('\n').map(Number), [tree.owner.uid, tree.owner.gid], `${label}: commands run as the workspace owner`);
    for (const command of WORK) {
      const outcome = await session.shell(command);
      t.is(outcome.status, 'success', `${label}: ${command}: ${outcome.text.slice(0, 400)}`);
    }
  } finally {
    await session.close();
  }
  const after = await snapshot(tree.root);
  const changed = [...before]
    .filter(([path, entry]) => after.get(path) !== entry)
    .map(([path]) => `${path}\n  before: ${before.get(path)}\n  after:  ${after.get(path) ?? '(gone)'}`);
  t.deepEqual(changed, [], `${label}: owners, modes and ACLs of what was there are exactly as they were`);
  for (const made of ['./made', './made/deeper', './made/deeper/new.txt', './made-here.txt', './shared/created-in-shared.txt', './sticky/mine.txt', './repo']) {
    const info = await stat(join(tree.root, made));
    t.is(info.uid, tree.owner.uid, `${label}: ${made} belongs to the workspace owner`);
  }
  const { stdout } = await run('getfacl', ['-R', '-P', '-n', '.'], { cwd: tree.root, maxBuffer: 1 << 24 });
  t.notRegex(stdout, /^(default:)?user:10001:/m, `${label}: no ACL entry for the old sandbox uid anywhere`);
}

/** The test's own user when it is not root: files of other owners need root to plant. */
const self = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };

test('a root-owned workspace (commands run as uid 0): owners, modes and ACLs stay; created files are root’s', async (t) => {
  await requireAclTools(t);
  if (UNDER_GVISOR && hostIsRoot) {
    // Under gVisor a root-owned workspace is refused (its commands would run as uid 0: docker-backend.ts), changing nothing.
    const tree = await plantTree(t, { uid: 0, gid: 0 });
    const before = await snapshot(tree.root);
    const session = await SandboxSession.open({ workspace: tree.root, timeoutSeconds: 30 });
    try {
      t.regex((await session.shell('echo ran')).text, /belongs to root, so its commands would run as uid 0, which gVisor \(runsc\)/);
    } finally {
      await session.close();
    }
    t.deepEqual(await snapshot(tree.root), before, 'owners, modes and ACLs of what was there are exactly as they were');
    return;
  }
  await checkUnchanged(t, await plantTree(t, hostIsRoot ? { uid: 0, gid: 0 } : self), hostIsRoot ? 'root-owned' : 'own (not root)');
});

test('a workspace owned by a regular user (commands run as that uid): owners, modes and ACLs stay; created files are the user’s', async (t) => {
  await requireAclTools(t);
  await checkUnchanged(t, await plantTree(t, hostIsRoot ? { uid: 4242, gid: 4243 } : self), 'user-owned');
});
