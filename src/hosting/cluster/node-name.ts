import { z } from 'zod';

/**
 * A cluster node's name as the front reads it from a session id
 * (`<node>.<random>`, HAProxy's `field(1,.)`): letters, digits and dashes,
 * no dot, at most 63 characters (a hostname label, as Swarm's node names are).
 */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/;

export const nodeNameSchema = z.string().regex(NODE_NAME_PATTERN, { error: 'must be a node name: letters, digits and dashes, no dot, at most 63' });
