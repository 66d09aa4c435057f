import test from 'ava';
import { SplitThread } from '../../src/policy/split-thread.js';

test('a bad budget is refused naming the field', (t) => {
  t.throws(() => new SplitThread({ budgetMs: 0 }), { instanceOf: RangeError, message: 'SplitThread: options.budgetMs must be more than 0' });
  t.throws(() => new SplitThread({ budget: 5 } as never), { instanceOf: TypeError, message: 'SplitThread: options.budget is not a known option' });
});
