/**
 * The egress allowlist (`sandbox.network: {allow}`), from inside a real
 * container: listed names work through the proxy for curl, git and Python
 * (pip's urllib), over HTTP and HTTPS; everything else fails, whichever way
 * it is tried: unlisted names, raw IPs, the metadata address, a listed name
 * that resolves to loopback, direct TCP past the proxy to the gateway or the
 * Docker bridge, UDP and DNS, IPv6. Nothing here needs the internet: the
 * upstream servers listen on this host (all interfaces, so a missing
 * firewall rule would show), and the proxy resolves the test names from a map.
 */
import anyTest from 'ava';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EgressEvent } from '../../src/egress/egress-event.js';
import { ShellService } from '../../src/shell/shell-service.js';
import { ShellTool } from '../../src/tools/shell/shell-tool.js';
import { makeWorkspace, requireDocker, runCommand, useSandboxBackend } from '../helpers/docker.js';
import { testRuntimeOption } from '../helpers/test-runtime.js';
import { startHttpServer, startHttpsServer, type TestWebServer } from '../helpers/egress-servers.js';

const docker = await requireDocker(anyTest, 'security/egress');
const test = docker.serial;

// Upstreams start before the backend (its options list their ports). They
// listen on every interface; the proxy reaches them at the Docker bridge's
// host address, which is private, so it is listed with their ports.
const BRIDGE_HOST = '172.17.0.1';
const web: TestWebServer = await startHttpServer({ host: '0.0.0.0', name: 'web' });
const secure: TestWebServer & { cert: string } = await startHttpsServer({ host: '0.0.0.0', name: 'secure', names: ['allowed.test'] });
const hidden: TestWebServer = await startHttpServer({ host: '0.0.0.0', name: 'hidden' });
const events: EgressEvent[] = [];
const logDir = mkdtempSync(join(tmpdir(), 'toolcell-egress-log-'));
const logFile = join(logDir, 'egress.log');
const sandbox = useSandboxBackend(docker, {
  egress: {
    allow: [
      `allowed.test:${web.port}`,
      `allowed.test:${secure.port}`,
      `${BRIDGE_HOST}:${web.port}`,
      `${BRIDGE_HOST}:${secure.port}`,
      `rebind.test:${hidden.port}`,
      `metadata.test:${web.port}`,
    ],
    hosts: { 'allowed.test': BRIDGE_HOST, 'rebind.test': '127.0.0.1', 'denied.test': BRIDGE_HOST, 'metadata.test': '169.254.169.254' },
    onEvent: (event) => events.push(event),
    logFile,
  },
});
let udp: UdpSocket;
const udpReceived: string[] = [];

docker.before(async () => {
  udp = createSocket('udp4');
  udp.on('message', (message, from) => udpReceived.push(`${from.address}: ${message.toString()}`));
  await new Promise<void>((resolve) => udp.bind(0, '0.0.0.0', resolve));
});
docker.after.always(async () => {
  udp?.close();
  await Promise.all([web, secure, hidden].map((server) => server.close()));
  await rm(logDir, { recursive: true, force: true });
});

/** The egress network's gateway, where the proxy listens: the host of the HTTP_PROXY commands get. */
async function gatewayOf(session: import('../../src/backends/backend.js').ShellSession): Promise<string> {
  const result = await runCommand(session, 'echo "$HTTP_PROXY"');
  return new URL(result.stdout.trim()).hostname;
}

test('curl reaches a listed name over HTTP and HTTPS through the proxy', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  await writeFile(`${workspaceRoot}/ca.pem`, secure.cert);
  const session = await sandbox.session(t, { workspaceRoot });
  const plain = await runCommand(session, `curl -sS -m 10 http://allowed.test:${web.port}/`);
  t.is(plain.stdout.trim(), 'hello from web', plain.stdout);
  const tls = await runCommand(session, `curl -sS -m 10 --cacert ca.pem https://allowed.test:${secure.port}/`);
  t.is(tls.stdout.trim(), 'hello from secure', tls.stdout);
  t.is(plain.status.notes, undefined, 'no refusal to report');
  t.true(events.some((event) => event.action === 'allowed' && event.via === 'connect' && event.host === 'allowed.test' && event.port === secure.port));
});

test('git and Python (as pip fetches) honour the proxy variables', async (t) => {
  const session = await sandbox.session(t);
  const before = web.hits;
  const git = await runCommand(session, `git ls-remote http://allowed.test:${web.port}/repo.git 2>&1; echo git=$?`);
  t.true(web.hits > before, `git's request reached the listed server: ${git.stdout}`);
  const python = await runCommand(
    session,
    `python3 -c 'import urllib.request; print(urllib.request.urlopen("http://allowed.test:${web.port}/simple/", timeout=10).read().decode())'`,
  );
  t.regex(python.stdout, /hello from web/);
});

test('an unlisted name fails and the call says why', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, `curl -sS -m 10 https://denied.test:${secure.port}/ 2>&1; echo curl=$?`);
  t.notRegex(result.stdout, /hello from/);
  t.notRegex(result.stdout, /curl=0\b/);
  t.deepEqual(result.status.notes, [`network: refused denied.test:${secure.port}, not in sandbox.network.allow`]);
  const logged = (await readFile(logFile, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as EgressEvent);
  t.true(logged.some((event) => event.action === 'refused' && event.host === 'denied.test' && event.port === secure.port && typeof event.time === 'string'));
  t.true(
    logged.some((event) => event.action === 'allowed' && event.host === 'allowed.test'),
    'allowed connections are logged too',
  );
});

test('raw IP addresses and the metadata service fail, through the proxy and past it', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(
    session,
    [
      // NO_PROXY holds 127.0.0.1, so curl is told to use the proxy for it by name.
      `curl -fsS -m 5 --proxy "$HTTP_PROXY" --noproxy '' http://127.0.0.1:${web.port}/ 2>&1; echo loop=$?`,
      `curl -fsS -m 5 http://169.254.169.254/latest/meta-data/ 2>&1; echo meta=$?`,
      `curl -fsS -m 5 http://metadata.test:${web.port}/ 2>&1; echo metaname=$?`,
      `curl -fsS -m 5 http://93.184.215.14/ 2>&1; echo public=$?`,
      `curl -fsS -m 5 --noproxy '*' http://169.254.169.254/ 2>&1; echo metadirect=$?`,
      `curl -fsS -m 5 --noproxy '*' http://93.184.215.14/ 2>&1; echo publicdirect=$?`,
    ].join('; '),
  );
  t.notRegex(result.stdout, /hello from/);
  for (const label of ['loop', 'meta', 'metaname', 'public', 'metadirect', 'publicdirect']) t.notRegex(result.stdout, new RegExp(`${label}=0\\b`), label);
  const refused = (result.status.notes ?? []).join('\n');
  t.regex(refused, /refused 127\.0\.0\.1:\d+, IP address not in sandbox\.network\.allow/);
  t.regex(refused, /refused 169\.254\.169\.254:80, IP address not in sandbox\.network\.allow/);
  t.regex(refused, /refused 93\.184\.215\.14:80, IP address not in sandbox\.network\.allow/);
  t.regex(refused, /refused metadata\.test:\d+, resolves only to non-public 169\.254\.169\.254 \(linkLocal\)/);
});

test('a listed name that resolves to 127.0.0.1 is refused and the server never sees a request', async (t) => {
  const session = await sandbox.session(t);
  const before = hidden.hits;
  const result = await runCommand(session, `curl -fsS -m 5 http://rebind.test:${hidden.port}/ 2>&1; echo curl=$?`);
  t.notRegex(result.stdout, /hello from hidden/);
  t.is(hidden.hits, before);
  t.regex((result.status.notes ?? []).join('\n'), /refused rebind\.test:\d+, resolves only to non-public 127\.0\.0\.1 \(loopback\)/);
});

test('direct TCP past the proxy fails: to the upstream ports on the gateway and the Docker bridge, and to other host ports', async (t) => {
  const session = await sandbox.session(t);
  const gateway = await gatewayOf(session);
  const probe = (host: string, port: number): string =>
    `python3 -c 'import socket
s = socket.socket(); s.settimeout(3)
try:
    s.connect(("${host}", ${port})); print("CONNECTED ${host}:${port}")
except OSError as e:
    print("blocked ${host}:${port}", e)'`;
  const result = await runCommand(
    session,
    [probe(gateway, web.port), probe(BRIDGE_HOST, web.port), probe(gateway, 22), probe('127.0.0.1', web.port)].join('; '),
  );
  t.notRegex(result.stdout, /CONNECTED/, result.stdout);
  t.is((result.stdout.match(/blocked/g) ?? []).length, 4, result.stdout);
});

test('UDP and DNS get nowhere: no name resolves in the container and no datagram reaches the host', async (t) => {
  const session = await sandbox.session(t);
  const gateway = await gatewayOf(session);
  const port = (udp.address() as { port: number }).port;
  // A resolver that answers does so in milliseconds; one that never answers makes getent wait out its
  // retries, so 5 s each is plenty to tell the two apart.
  const result = await runCommand(
    session,
    `timeout 5 getent hosts allowed.test; echo getent=$?; timeout 5 getent hosts example.com; echo getent=$?; python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for host in ["${gateway}", "${BRIDGE_HOST}", "10.255.255.53"]:
    for p in (53, ${port}):
        try:
            s.sendto(b"exfil", (host, p))
        except OSError as e:
            print("send failed", host, e)
print("sent")'`,
  );
  t.notRegex(result.stdout, /getent=0\b/);
  t.regex(result.stdout, /sent/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.deepEqual(udpReceived, []);
});

test('IPv6 is off in the container: no address, and connects fail', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(
    session,
    `cat /proc/net/if_inet6; echo addrs=done; python3 -c 'import socket
for host in ["::1", "fe80::1%eth0", "2606:4700::1"]:
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM); s.settimeout(3); s.connect((host, 80)); print("CONNECTED", host)
    except OSError as e:
        print("blocked", host, e.strerror)'`,
  );
  t.regex(result.stdout, /^addrs=done/m, 'no IPv6 address listed');
  t.notRegex(result.stdout, /CONNECTED/);
});

test('sessions on the egress network cannot reach each other', async (t) => {
  const server = await sandbox.session(t);
  const client = await sandbox.session(t);
  const listening = await server.spawn({
    command: `python3 -m http.server 8099 --bind 0.0.0.0`,
    cwd: '.',
    env: { PATH: '/usr/bin:/bin', HOME: '/tmp' },
    mode: 'pipes',
    background: true,
  });
  t.true(listening.pid > 0);
  const address = await runCommand(server, `hostname -I`);
  const target = address.stdout.trim().split(/\s+/)[0] ?? '';
  t.regex(target, /^\d+\.\d+\.\d+\.\d+$/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const result = await runCommand(
    client,
    `curl -fsS -m 3 --noproxy '*' http://${target}:8099/ 2>&1; echo direct=$?; curl -fsS -m 3 http://${target}:8099/ 2>&1; echo proxied=$?`,
  );
  t.notRegex(result.stdout, /direct=0\b/);
  t.notRegex(result.stdout, /proxied=0\b/);
});

test('run_shell_command tells the model which connection the sandbox refused and why', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const service = await ShellService.create({
    docker: {
      ...testRuntimeOption(),
      warmPool: 0,
      egress: { allow: [`allowed.test:${web.port}`, `${BRIDGE_HOST}:${web.port}`], hosts: { 'allowed.test': BRIDGE_HOST } },
    },
  });
  t.teardown(() => service.close());
  const session = await service.openSession({ sandbox: 'docker', workspaceRoot });
  const tool = new ShellTool({ session, workspace: { roots: [workspaceRoot], stateDir: join(workspaceRoot, '.toolcell') } });
  const validated = tool.validateParams({
    command: `curl -fsS -m 10 http://allowed.test:${web.port}/; curl -fsS -m 10 https://pypi.org/simple/ 2>&1; echo curl=$?`,
  });
  if (!validated.ok) throw new Error(validated.error);
  const result = await tool.execute(validated.params, new AbortController().signal);
  const text = typeof result.llmContent === 'string' ? result.llmContent : JSON.stringify(result.llmContent);
  t.regex(text, /hello from web/);
  t.regex(text, /network: refused pypi\.org:443, not in sandbox\.network\.allow/);
  t.regex(String(result.returnDisplay), /network: refused pypi\.org:443/);
});

test('ICMP gets nowhere: no raw or ping socket can send an echo request to the gateway', async (t) => {
  const session = await sandbox.session(t);
  const gateway = await gatewayOf(session);
  const result = await runCommand(
    session,
    `python3 -c 'import socket, struct
packet = struct.pack("!BBHHH", 8, 0, 0xf7ff, 0, 0)
for kind, proto in (("raw", socket.SOCK_RAW), ("ping", socket.SOCK_DGRAM)):
    try:
        s = socket.socket(socket.AF_INET, proto, socket.IPPROTO_ICMP); s.settimeout(2)
        s.sendto(packet, ("${gateway}", 0)); s.recvfrom(64); print("REPLY", kind)
    except OSError as e:
        print("blocked", kind, e.strerror or e)'`,
  );
  t.notRegex(result.stdout, /REPLY/);
  t.is((result.stdout.match(/blocked/g) ?? []).length, 2, result.stdout);
});
