import { execFileSync } from 'node:child_process';

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
