import { z } from 'zod';
import { AllowList } from './allow-list.js';

/**
 * The entries of an egress allow list as options and files carry them (the
 * settings' `sandbox.network.allow`, a tenant's `network.allow`): up to 1,000
 * host names, `*.domain`s, addresses and CIDR ranges, each checked as the
 * proxy will read it. `explain` words AllowList's complaint for where the
 * list came from.
 */
export function allowListEntriesSchema(explain: (problem: string) => string) {
  return z
    .array(z.string().min(1))
    .max(1000)
    .superRefine((entries, context) => {
      try {
        new AllowList(entries);
      } catch (error) {
        context.addIssue({ code: 'custom', message: explain((error as Error).message) });
      }
    });
}
