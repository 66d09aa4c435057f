import { readFile, readdir, readlink, realpath } from 'node:fs/promises';

/** One line of /proc/self/mountinfo that matters here. */
export interface MountEntry {
  /** Where it is mounted (unescaped). */
  mountPoint: string;
  /** The mounted device or source (`/dev/loop3`), unescaped. */
  source: string;
  fsType: string;
  /** Its peer group (`shared:N`) where it propagates mounts and unmounts to copies elsewhere. */
  peerGroup: string | undefined;
}

/** mountinfo writes space, tab, newline and backslash in paths as `\040`-style octal escapes. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The mounts at `path`, lowest first (a path can carry stacked mounts). */
export async function mountsAt(path: string): Promise<MountEntry[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  const entries: MountEntry[] = [];
  for (const line of table.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 0 || fields[4] === undefined) continue;
    const mountPoint = unescape(fields[4]);
    if (mountPoint !== path) continue;
    const peerGroup = optionalFields(fields)
      .find((field) => field.startsWith('shared:'))
      ?.slice('shared:'.length);
    entries.push({ mountPoint, fsType: fields[separator + 1] ?? '', source: unescape(fields[separator + 2] ?? ''), peerGroup });
  }
  return entries;
}

/**
 * The loop devices whose backing file is `image` (by real path), from
 * /sys/block/loop*\/loop/backing_file. More than one would mean the same
 * filesystem attached twice, which two writers would corrupt; callers reuse
 * the first instead of attaching another.
 */
export async function loopDevicesOf(image: string): Promise<string[]> {
  const target = await realpath(image);
  const devices: string[] = [];
  const names = await readdir('/sys/block').catch(() => [] as string[]);
  for (const name of names.filter((entry) => /^loop\d+$/.test(entry)).sort()) {
    const backing = await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').catch(() => undefined);
    if (backing?.trimEnd() === target) devices.push(`/dev/${name}`);
  }
  return devices;
}

/** The fields of a mountinfo line: mount ID, parent, major:minor, root, mount point, options, optional fields up to '-'. */
function optionalFields(fields: string[]): string[] {
  const separator = fields.indexOf('-');
  return separator < 6 ? [] : fields.slice(6, separator);
}

/**
 * The mount namespaces other than this process's (`mnt:[4026532…]`) that
 * have the filesystem of block device `deviceNumber` ("7:3") mounted where
 * an unmount of `path` here does not reach it. Processes that made a
 * namespace of their own copy every mount into it: a container keeps its
 * copy of a workspace for as long as it runs, and one starting anywhere on
 * the host holds all of them until it has set up its root. Copies in this
 * mount's peer group (`shared:N`, or `master:N` below it) are unmounted
 * along with it, so they do not count.
 */
export async function namespacesHolding(deviceNumber: string, path: string): Promise<Set<string>> {
  const group = (await mountsAt(path)).at(-1)?.peerGroup;
  const seen = new Set([await readlink('/proc/self/ns/mnt').catch(() => '')]);
  const holding = new Set<string>();
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const namespace = await readlink(`/proc/${pid}/ns/mnt`).catch(() => undefined);
    if (namespace === undefined || seen.has(namespace)) continue;
    seen.add(namespace);
    const table = await readFile(`/proc/${pid}/mountinfo`, 'utf8').catch(() => '');
    for (const line of table.split('\n')) {
      const fields = line.split(' ');
      if (fields[2] !== deviceNumber) continue;
      const propagated = group !== undefined && optionalFields(fields).some((field) => field === `shared:${group}` || field === `master:${group}`);
      if (!propagated) holding.add(namespace);
    }
  }
  return holding;
}
