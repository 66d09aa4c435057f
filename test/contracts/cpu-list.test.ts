import test from 'ava';
import { cpuListSchema, formatCpuList, MAX_CPU, parseCpuList } from '../../src/contracts/cpu-list.js';

test('a CPU list in the forms Linux and Docker write reads as its CPUs, ascending and distinct', (t) => {
  t.deepEqual(parseCpuList('1'), [1]);
  t.deepEqual(parseCpuList('0-3'), [0, 1, 2, 3]);
  t.deepEqual(parseCpuList('5,0,2-3,3'), [0, 2, 3, 5]);
  t.deepEqual(parseCpuList(`${MAX_CPU}`), [MAX_CPU]);
});

test('anything else is refused with what is wrong, never read as some other set', (t) => {
  for (const text of ['', ' 1', '1 ', 'a', '-1', '1-', '-', '1,,2', ',1', '1,', '0-7:2', '1.5', '0x1', '１']) {
    t.regex(parseCpuList(text) as string, /must be CPU numbers and ranges/, JSON.stringify(text));
  }
  t.is(parseCpuList('3-1'), 'has the range 3-1, which ends before it starts');
  t.is(parseCpuList(`0-${MAX_CPU + 1}`), `names CPU ${MAX_CPU + 1}, above ${MAX_CPU}`);
  t.is(parseCpuList('99999999999999999999999'), `names CPU 99999999999999999999999, above ${MAX_CPU}`);
});

test('written back canonical: runs of CPUs as ranges, in order', (t) => {
  t.is(formatCpuList([3, 1, 2, 7, 5, 6, 9]), '1-3,5-7,9');
  t.is(formatCpuList([0]), '0');
  t.is(formatCpuList([]), '');
  t.is(cpuListSchema.parse('3,1-2,2'), '1-3');
  t.false(cpuListSchema.safeParse('2-1').success);
});
