import test from 'ava';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../src/contracts/parse-options.js';

const schema = z.strictObject({
  size: integerOption(1, 10, 100),
  name: z.string().min(1).optional(),
  who: z.union([z.literal('auto'), z.strictObject({ uid: z.number().int().min(1) })], { error: "must be 'auto' or {uid}" }).default('auto'),
  nested: z.strictObject({ flag: z.boolean().default(true) }).prefault({}),
});

test('defaults fill what is missing, also when nothing is given', (t) => {
  t.deepEqual(parseOptions(schema, undefined, 'f'), { size: 10, who: 'auto', nested: { flag: true } });
  t.deepEqual(parseOptions(schema, { size: 3, nested: {} }, 'f'), { size: 3, who: 'auto', nested: { flag: true } });
});

const bad: Array<[string, unknown, string, typeof TypeError | typeof RangeError]> = [
  ['null', null, 'f: options must be an object', TypeError],
  ['a number out of bounds', { size: 0 }, 'f: options.size must be at least 1', RangeError],
  ['a number above the bound', { size: 101 }, 'f: options.size must be at most 100', RangeError],
  ['a fraction', { size: 1.5 }, 'f: options.size must be an integer', TypeError],
  ['a string where a number goes', { size: '5' }, 'f: options.size must be a number', TypeError],
  ['an empty string', { name: '' }, 'f: options.name must not be empty', TypeError],
  ['a misspelt option', { sise: 5 }, 'f: options.sise is not a known option', TypeError],
  ['a misspelt nested option', { nested: { flg: true } }, 'f: options.nested.flg is not a known option', TypeError],
  ["a union's object branch with a bad field", { who: { uid: 0 } }, 'f: options.who.uid must be at least 1', RangeError],
  ['a union given neither branch', { who: 'root' }, "f: options.who must be 'auto' or {uid}", TypeError],
];

for (const [label, value, message, type] of bad) {
  test(`${label} is a ${type.name} naming the field`, (t) => {
    t.throws(() => parseOptions(schema, value, 'f'), { instanceOf: type, message });
  });
}
