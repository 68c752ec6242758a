/**
 * Hostile or broken environment modules stay contained: tools that never return or return megabytes,
 * an init that throws, huge files, and a module that tampers with its globals. Each ends as an error
 * the user or the model can read, within its deadline; nothing escapes an episode.
 */
import { describe, expect, it } from 'vitest';
import { loadEnvironmentModule, MAX_MODULE_CHARS } from '../../src/envs/module-env.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { DEFAULT_MAX_RESULT_CHARS } from '../../src/sandbox/index.ts';

const module = (tools: string, init = 'return {};') => `export default {
  name: 'hostile', description: 'd', tags: [], levels: [1],
  tools: { ${tools} },
  init(task) { ${init} },
  sample(rng) { return { prompt: 'go', data: {}, key: String(rng.int(0, 1e6)) }; },
  evaluate() { return 0; },
};`;

/** One episode making `calls`; the deadline is short only where a test is about the deadline. */
async function episodeWith(source: string, calls: string[], toolTimeoutMs = 30_000) {
  const { env, close } = await loadEnvironmentModule(source);
  try {
    const task = env.generate(1, 1, 'train');
    const turns = [...calls.map((c) => `<tool_call>${c}</tool_call>`), 'done'];
    return await runEpisode({
      policy: new ScriptedPolicy({ id: 's', turns }),
      env,
      task,
      seed: 1,
      maxSteps: turns.length,
      toolTimeoutMs,
    });
  } finally {
    close();
  }
}

describe('hostile environment modules', () => {
  it('a tool that never returns is stopped at the call deadline, and the episode goes on', async () => {
    const t = await episodeWith(
      module('spin: { description: "d", parameters: {}, run() { for (;;) {} } }'),
      ['{"name":"spin","arguments":{}}'],
      200,
    );
    expect(t.steps[0].tool_call!.error).toMatch(/timeout after 200 ms/);
    expect(t.final_response).toBe('done');
  });

  it('a tool that returns megabytes is cut to the result cap, with a marker', async () => {
    const t = await episodeWith(
      module('flood: { description: "d", parameters: {}, run() { return "x".repeat(5e6); } }'),
      ['{"name":"flood","arguments":{}}'],
    );
    const result = t.steps[0].tool_call!.result;
    expect(result.length).toBeLessThan(DEFAULT_MAX_RESULT_CHARS + 100);
    expect(result).toMatch(/\[truncated \d+ chars\]$/);
  });

  it('an init that throws makes each call an error step, not a crashed episode', async () => {
    const t = await episodeWith(
      module(
        'ok: { description: "d", parameters: {}, run() { return "fine"; } }',
        'throw new Error("no state for you");',
      ),
      ['{"name":"ok","arguments":{}}', '{"name":"ok","arguments":{}}'],
    );
    expect(t.steps.map((s) => s.tool_call!.error)).toEqual([
      expect.stringMatching(/no state for you/),
      expect.stringMatching(/no state for you/),
    ]);
    expect(t.finish_reason).toBe('answer');
  });

  it('a module that replaces JSON cannot hand the host anything but its own values', async () => {
    const source = `JSON.stringify = () => '{"pwned":true}'; JSON.parse = () => ({ pwned: true });\n${module('echo: { description: "d", parameters: { s: { type: "string" } }, run({ s }) { return s; } }')}`;
    const t = await episodeWith(source, ['{"name":"echo","arguments":{"s":"hello"}}']);
    expect(t.steps[0].tool_call).toMatchObject({ result: 'hello', error: null });
  });

  it('a huge module is refused before it is parsed, saying what to do', async () => {
    const huge = `// ${'x'.repeat(MAX_MODULE_CHARS)}\n${module('')}`;
    await expect(loadEnvironmentModule(huge)).rejects.toThrow(/keep tasks' data in a task file/);
  });
});
