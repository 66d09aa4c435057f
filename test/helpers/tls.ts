import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether `openssl` runs here (TLS tests make their certificates with it; under CI=true they must run). */
export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A fresh self-signed P-256 certificate for 127.0.0.1 and localhost, valid a day, with `name` as its CN. */
export function makeSelfSignedCertificate(certFile: string, keyFile: string, name = 'localhost'): void {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
}

export interface CertificateOptions {
  /** The subject's CN (what tests read back to tell certificates apart). */
  name: string;
  /** subjectAltName entries; default `IP:127.0.0.1,DNS:localhost`. */
  altNames?: string;
  notBefore: Date;
  notAfter: Date;
}

/** `20990101000000Z`, the form `openssl ca -startdate/-enddate` takes. */
function asn1Time(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

/**
 * A self-signed P-256 certificate with the validity and names given (an
 * expired one, one not valid yet, one for another host), signed by
 * `openssl ca -selfsign`: OpenSSL 3.0's `req -x509` can only start now.
 */
export function makeCertificate(certFile: string, keyFile: string, options: CertificateOptions): void {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-cert-'));
  try {
    writeFileSync(join(dir, 'index.txt'), '');
    writeFileSync(join(dir, 'serial'), `${randomBytes(8).toString('hex')}\n`);
    const config = join(dir, 'ca.cnf');
    writeFileSync(
      config,
      [
        '[ca]',
        'default_ca = local',
        '[local]',
        `database = ${join(dir, 'index.txt')}`,
        `new_certs_dir = ${dir}`,
        `serial = ${join(dir, 'serial')}`,
        'default_md = sha256',
        'policy = any',
        'copy_extensions = copy',
        'unique_subject = no',
        '[any]',
        'commonName = supplied',
        '',
      ].join('\n'),
    );
    const request = join(dir, 'request.csr');
    const altNames = options.altNames ?? 'IP:127.0.0.1,DNS:localhost';
    const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
    run(
      ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${options.name}`].concat([
        '-addext',
        `subjectAltName=${altNames}`,
        '-keyout',
        keyFile,
        '-out',
        request,
      ]),
    );
    run(
      ['ca', '-batch', '-config', config, '-selfsign', '-keyfile', keyFile, '-in', request, '-out', certFile, '-notext'].concat([
        '-startdate',
        asn1Time(options.notBefore),
        '-enddate',
        asn1Time(options.notAfter),
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
