import { getEnvironment } from '../src/envs/registry.ts';
import { evaluateBlindPolicies } from '../src/rollout/blind-policies.ts';
for (const name of ['file_chain', 'order_total', 'func_trace', 'shell_exec']) {
  const env = getEnvironment(name);
  const all = await evaluateBlindPolicies(env, 2, { items: 10, seed: 3 });
  const mine = all.filter((r) => r.policy.startsWith('list every file'));
  const best = all.reduce((b, r) => (r.success > b.success ? r : b));
  console.log(name, mine.map((r) => `${r.policy.slice(-30)} ${r.success}`).join(' | '), 'best', best.policy, best.success);
}
