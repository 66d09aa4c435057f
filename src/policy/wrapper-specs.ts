/**
 * How each known wrapper reads its options before the command it runs.
 * An option not listed here makes the wrapper "cannot be judged": guessing
 * wrong whether an option takes an argument would judge the wrong word as
 * the command (`taskset -c 0 rm x` is `rm x`, not `0 rm x`).
 */
export interface WrapperSpec {
  /** Judged itself besides what it runs: it changes who runs it or how often (`sudo`, `xargs`, `find -exec`). */
  checked: boolean;
  /** Short options that take an argument (attached or the next word). */
  short?: string;
  /** Short options that take none. */
  flags?: string;
  /** Long options that take an argument (`--name value` or `--name=value`). */
  long?: readonly string[];
  /** Long options that take none (or only as `--name=value`). */
  longFlags?: readonly string[];
  /** Options after which the wrapper runs a string it splits itself (`env -S`). */
  uncertain?: readonly string[];
  /** Options after which it runs nothing (`command -v`, `sudo -l`, `ionice -p`). */
  noCommand?: readonly string[];
  /** Words after the options and before the command (`timeout DURATION`, `chroot NEWROOT`). */
  positional?: number;
  /** `NAME=VALUE` words before the command set its environment (`env`, `sudo`). */
  assignments?: boolean;
  /** What runs when no command is given: a program (`xargs` → echo), or `shell` (an interactive shell reading its input). */
  whenEmpty?: string;
  /** Runs the command with more words read from its input (`xargs`): the command may not be a wrapper itself. */
  appendsWords?: boolean;
  /** Old-style numeric options (`nice -5`). */
  numericOptions?: boolean;
}

export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: {
    checked: false,
    short: 'uC',
    flags: 'i0v',
    long: ['--unset', '--chdir'],
    longFlags: ['--ignore-environment', '--null', '--debug', '--default-signal', '--ignore-signal', '--block-signal', '--list-signal-handling'],
    uncertain: ['-S', '--split-string'],
    assignments: true,
  },
  nohup: { checked: false },
  nice: { checked: false, short: 'n', long: ['--adjustment'], numericOptions: true },
  ionice: {
    checked: false,
    short: 'cn',
    flags: 't',
    long: ['--class', '--classdata'],
    longFlags: ['--ignore'],
    noCommand: ['-p', '-P', '-u', '--pid', '--pgid', '--uid'],
  },
  timeout: {
    checked: false,
    short: 'sk',
    flags: 'v',
    long: ['--signal', '--kill-after'],
    longFlags: ['--preserve-status', '--foreground', '--verbose'],
    positional: 1,
  },
  stdbuf: { checked: false, short: 'ioe', long: ['--input', '--output', '--error'] },
  setsid: { checked: false, flags: 'cfw', longFlags: ['--ctty', '--fork', '--wait'] },
  time: { checked: false, short: 'fo', flags: 'apqv', long: ['--format', '--output'], longFlags: ['--append', '--portability', '--verbose', '--quiet'] },
  command: { checked: false, flags: 'p', noCommand: ['-v', '-V'] },
  builtin: { checked: false },
  exec: { checked: false, short: 'a', flags: 'cl' },
  coproc: { checked: false },
  eatmydata: { checked: false },
  nocache: { checked: false },
  chroot: { checked: false, long: ['--userspec', '--groups'], longFlags: ['--skip-chdir'], positional: 1, whenEmpty: 'shell' },
  taskset: { checked: false, flags: 'ac', longFlags: ['--all-tasks', '--cpu-list'], noCommand: ['-p', '--pid'], positional: 1 },
  chrt: { checked: false, short: 'TPD', flags: 'bdfiorRva', noCommand: ['-p', '--pid', '-m', '--max'], positional: 1 },
  setpriv: {
    checked: true,
    long: [
      '--reuid',
      '--regid',
      '--ruid',
      '--euid',
      '--rgid',
      '--egid',
      '--groups',
      '--inh-caps',
      '--ambient-caps',
      '--bounding-set',
      '--securebits',
      '--pdeathsig',
      '--selinux-label',
      '--apparmor-profile',
      '--landlock-access',
      '--landlock-rule',
    ],
    longFlags: ['--clear-groups', '--keep-groups', '--init-groups', '--nnp', '--no-new-privs', '--reset-env'],
    noCommand: ['-d', '--dump'],
  },
  unshare: {
    checked: true,
    short: 'SGRwl',
    flags: 'muinpUCTfrc',
    long: ['--setuid', '--setgid', '--root', '--wd', '--propagation', '--setgroups', '--kill-child', '--load-interp'],
    longFlags: [
      '--mount',
      '--uts',
      '--ipc',
      '--net',
      '--pid',
      '--user',
      '--cgroup',
      '--time',
      '--fork',
      '--map-root-user',
      '--map-current-user',
      '--mount-proc',
      '--keep-caps',
      '--map-auto',
    ],
    whenEmpty: 'shell',
  },
  fakeroot: { checked: false, short: 'lisb', flags: 'uhv', long: ['--lib', '--faked'], whenEmpty: 'shell' },
  gosu: { checked: true, positional: 1 },
  'su-exec': { checked: true, positional: 1 },
  'dumb-init': { checked: false, short: 'r', flags: 'cv', long: ['--rewrite'], longFlags: ['--single-child', '--verbose'] },
  sudo: {
    checked: true,
    short: 'ughpCDrtTUc',
    flags: 'AbBEHknPS',
    long: ['--user', '--group', '--host', '--prompt', '--close-from', '--chdir', '--role', '--type', '--other-user', '--command-timeout'],
    longFlags: [
      '--askpass',
      '--background',
      '--bell',
      '--preserve-env',
      '--set-home',
      '--reset-timestamp',
      '--non-interactive',
      '--preserve-groups',
      '--stdin',
    ],
    noCommand: ['-e', '--edit', '-l', '--list', '-v', '--validate', '-K', '--remove-timestamp', '-V', '--version', '-h', '--help'],
    uncertain: ['-s', '--shell', '-i', '--login'],
    assignments: true,
  },
  doas: { checked: true, short: 'uC', flags: 'nLs' },
  xargs: {
    checked: true,
    short: 'adEILnPs',
    flags: '0prtxo',
    long: ['--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    longFlags: ['--null', '--no-run-if-empty', '--interactive', '--verbose', '--exit', '--open-tty', '--show-limits'],
    whenEmpty: 'echo',
    appendsWords: true,
  },
};

/** Shells whose `-c` code is parsed as bash; other shells' code is parsed too but never trusted. */
export const BASH_LIKE_SHELLS = new Set(['bash', 'sh', 'dash', 'ash']);
export const OTHER_SHELLS = new Set(['zsh', 'ksh', 'ksh93', 'mksh', 'pdksh', 'yash', 'posh', 'fish', 'csh', 'tcsh', 'rbash', 'oksh', 'loksh']);

/** Programs that run their arguments through options the engine does not follow: judged, but never trusted. */
export const OPAQUE_RUNNERS = new Set([
  'parallel',
  'expect',
  'systemd-run',
  'pkexec',
  'firejail',
  'bwrap',
  'proot',
  'nsenter',
  'prlimit',
  'strace',
  'ltrace',
  'valgrind',
  'gdb',
  'dbus-run-session',
  'numactl',
  'cgexec',
  'catchsegv',
  'unbuffer',
  'rlwrap',
  'torsocks',
  'proxychains',
  'proxychains4',
  'faketime',
  'tini',
  'entr',
  'nq',
  'chpst',
  'setuidgid',
  'softlimit',
  'envdir',
  'flatpak-spawn',
  'sshpass',
  'script',
]);
