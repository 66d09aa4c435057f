import { readFile, readdir, realpath } from 'node:fs/promises';

/** One line of /proc/self/mountinfo that matters here. */
export interface MountEntry {
  /** Where it is mounted (unescaped). */
  mountPoint: string;
  /** The mounted device or source (`/dev/loop3`), unescaped. */
  source: string;
  fsType: string;
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
    entries.push({ mountPoint, fsType: fields[separator + 1] ?? '', source: unescape(fields[separator + 2] ?? '') });
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
