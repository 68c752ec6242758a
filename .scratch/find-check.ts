import { getEnvironment } from '../src/envs/registry.ts';
import { runEpisode } from '../src/rollout/episode.ts';
import { ScriptedPolicy } from '../src/rollout/scripted-policy.ts';
const env = getEnvironment('order_total');
const task = env.generate(1, 2, 'test');
const t = await runEpisode({ policy: new ScriptedPolicy({ turns: ['<tool_call>{"name":"sh","arguments":{"command":"find . -type f"}}</tool_call>', 'x'] }), env, task, seed: 1, maxSteps: 3 });
console.log(t.steps[0].observation);
