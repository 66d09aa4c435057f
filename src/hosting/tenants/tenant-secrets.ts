import { z } from 'zod';
import { SecretBox } from '../../secrets/secret-box.js';
import { secretNameProblem } from '../../secrets/secret-rules.js';

/**
 * A tenant's secrets in the tenants file: name → the value sealed with the
 * server's key (`v1.<nonce>.<ciphertext+tag>`, secret-box.ts) and when it
 * was set. The file never holds a value in the clear.
 */
export const tenantSecretsSchema = z
  .record(
    z.string(),
    z.strictObject({
      sealed: z.string().regex(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22,}$/, { error: 'must be a value sealed by toolcell tenant secret set' }),
      updatedAt: z.iso.datetime(),
    }),
  )
  .superRefine((secrets, context) => {
    for (const name of Object.keys(secrets)) {
      const problem = secretNameProblem(name);
      if (problem) context.addIssue({ code: 'custom', path: [name], message: problem });
    }
  });

export type TenantSecrets = z.infer<typeof tenantSecretsSchema>;

/**
 * Opens a tenant's sealed secrets with the data dir's key, loaded on first
 * use (a server whose tenants have no secrets never needs one). Throws
 * `secret_unavailable` naming the secret when the key is missing or a value
 * does not open; never quotes a value.
 */
export class TenantSecretOpener {
  readonly #dataDir: string;
  #box: Promise<SecretBox> | undefined;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
  }

  async open(tenant: string, sealed: Readonly<Record<string, string>> | undefined): Promise<Record<string, string> | undefined> {
    if (sealed === undefined || Object.keys(sealed).length === 0) return undefined;
    this.#box ??= SecretBox.open(this.#dataDir);
    // A missing key may be made later (`tenant secret set`): try again next time.
    const box = await this.#box.catch((error: unknown) => {
      this.#box = undefined;
      throw error;
    });
    return Object.fromEntries(Object.entries(sealed).map(([name, value]) => [name, box.open(tenant, name, value)]));
  }
}
