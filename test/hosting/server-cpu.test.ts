/**
 * ServerCpuLedger: each tenant's share of the server's shared threads. No
 * duration is asserted: what is checked is who waits and who does not, and
 * what each tenant is charged.
 */
import test from 'ava';
import { setImmediate as tick } from 'node:timers/promises';
import { SERVER_CPU_BURST_SECONDS, ServerCpuLedger } from '../../src/hosting/admission/server-cpu.js';

/** Whether `promise` has settled by the next turn of the event loop. */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await tick();
  return settled;
}

test('a tenant with its burst left starts at once; past it, it waits until its debt is paid, and another tenant does not wait', async (t) => {
  const rates: Record<string, number> = { greedy: 1, quiet: 1 };
  const ledger = new ServerCpuLedger({ rateOf: (tenant) => rates[tenant]! });
  const greedy = ledger.budgetFor('greedy');
  const quiet = ledger.budgetFor('quiet');
  t.true(await settledNow(greedy.admit()), 'a full bucket: no wait');
  // The whole burst and 60 ms more: 60 ms of debt at 1 CPU.
  greedy.charge(SERVER_CPU_BURST_SECONDS * 1000 + 60);
  const waiting = greedy.admit();
  t.false(await settledNow(waiting), 'in debt: it waits');
  t.is(ledger.waiting, 1);
  t.true(await settledNow(quiet.admit()), "another tenant's work is not held up by it");
  await waiting;
  t.is(ledger.waiting, 0);
  const usage = Object.fromEntries(ledger.usage().map((entry) => [entry.tenant, entry]));
  t.is(usage['greedy']!.cpuSeconds, SERVER_CPU_BURST_SECONDS + 0.06);
  t.true(usage['greedy']!.waitedSeconds > 0);
  t.is(usage['quiet']!.waitedSeconds, 0);
});

test('a wait ends with the call: an aborted admit rejects and is no longer counted as waiting', async (t) => {
  const ledger = new ServerCpuLedger({ rateOf: () => 0.01 });
  const budget = ledger.budgetFor('greedy');
  // 0.04 s of burst; 10 s of CPU is 1,000 s of debt at 0.01 CPU.
  budget.charge(10_000);
  const controller = new AbortController();
  const waiting = budget.admit(controller.signal);
  t.false(await settledNow(waiting));
  controller.abort(new Error('the call was cancelled'));
  await t.throwsAsync(waiting, { any: true });
  t.is(ledger.waiting, 0);
  await t.throwsAsync(budget.admit(AbortSignal.abort()), { any: true }, 'an aborted signal is refused before any wait');
});

test('the rate is read each time: a larger serverCpu applies to a tenant already waiting', async (t) => {
  let rate = 0.001;
  const ledger = new ServerCpuLedger({ rateOf: () => rate });
  const budget = ledger.budgetFor('t');
  budget.charge(1_000);
  // A second of debt at 0.001 CPU: 1,000 s. Raised to 1,000 CPUs, it is paid by the next look (within a second).
  const waiting = budget.admit();
  t.false(await settledNow(waiting));
  rate = 1_000;
  await waiting;
  t.is(ledger.waiting, 0);
});

test('a tenant with no rate (removed meanwhile) is only counted, never held; bad figures are ignored', async (t) => {
  const ledger = new ServerCpuLedger({ rateOf: () => Number.NaN });
  const budget = ledger.budgetFor('gone');
  budget.charge(1e9);
  t.true(await settledNow(budget.admit()));
  for (const bad of [Number.NaN, -5, Number.POSITIVE_INFINITY, 0]) budget.charge(bad);
  t.is(ledger.usage()[0]!.cpuSeconds, 1e6);
  ledger.forget('gone');
  t.deepEqual(ledger.usage(), []);
});
