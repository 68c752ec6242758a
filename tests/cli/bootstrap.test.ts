/**
 * `spindle bootstrap` and the check's policy probe through the CLI, on a fixture environment whose tool
 * no policy has seen (tests/fixtures/envs/bell.js). Demonstrations come from a real OpenAI-compatible
 * server on 127.0.0.1 written here, which plays the task as a larger model would; one that never answers
 * and one that answers junk fail with a sentence naming the endpoint and the fix, and nothing stalls.
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, nanoModelDir, tempDir, tinyConfig, writeConfig } from './helpers.ts';

const BELL = join(import.meta.dirname, '../fixtures/envs/bell.js');
const CALL = '<tool_call>{"name": "ring", "arguments": {}}</tool_call>';

interface Teacher {
  url: string;
  requests: { model: string; authorization: string | undefined; messages: { role: string; content: string }[] }[];
  close(): Promise<void>;
}

/** A chat-completions server: `reply` answers each request's messages (null: never answer). */
async function teacher(reply: (messages: { role: string; content: string }[]) => string | null): Promise<Teacher> {
  const requests: Teacher['requests'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { model: string; messages: { role: string; content: string }[] };
      requests.push({ model: parsed.model, authorization: req.headers.authorization, messages: parsed.messages });
      const text = req.url === '/v1/chat/completions' ? reply(parsed.messages) : 'not found';
      if (text === null) return; // a server that hangs: the client's timeout must end it
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        text.startsWith('RAW:')
          ? text.slice(4)
          : JSON.stringify({ choices: [{ message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Plays the bell as a model that knows the tool: ring first, then say done. */
const knowsTheTool = (messages: { role: string; content: string }[]) =>
  messages.at(-1)!.content.includes('<tool_response>') ? 'done' : CALL;

let dir: string;
beforeAll(() => {
  dir = tempDir();
  copyFileSync(BELL, join(dir, 'bell.js'));
  writeConfig(
    dir,
    tinyConfig((c) => {
      c.tasks.environments = [];
      c.tasks.eval_items = 8;
      c.sampling.max_new_tokens = 48;
      c.trajectory_collection.max_steps_per_trajectory = 2;
      c.lora.r = 8;
      c.lora.alpha = 16;
    }),
  );
});

describe('the check through the CLI', () => {
  it('envs audit samples the policy and, when it solves none, says to bootstrap it', async () => {
    const model = await nanoModelDir(2);
    const r = await cli(dir, 'envs', 'audit', 'bell.js', '--items', '2', '--policy-items', '2', '--model', model);
    expect(r.out).toMatch(/Policy: the policy \(.*nano\) solved 0\/2 sampled items at level 1 \(greedy\)/);
    expect(r.out).toMatch(
      /warning: .*solved 0 of 2 sampled items at level 1: GRPO learns from the spread of rewards within a group.*`spindle bootstrap --env bell`/,
    );
    const skipped = await cli(dir, 'envs', 'audit', 'bell.js', '--items', '2', '--policy-items', '0');
    expect(skipped.out).not.toMatch(/Policy:/);
  }, 120_000);
});

describe('spindle train from 0%', () => {
  it('warns that GRPO may have nothing to learn from and names spindle bootstrap', async () => {
    const model = await nanoModelDir(3);
    const r = await cli(
      dir,
      'train',
      '--config',
      'run.yaml',
      '--env-file',
      'bell.js',
      '--model',
      model,
      '--steps',
      '1',
      '--store',
      'train-store',
    );
    expect(r.code).toBe(0);
    expect(r.err).toMatch(
      /eval step 0 bell \(test\): 0\/8 = 0% \[0, 32\]\nwarning: bell starts at 0% held-out: .*spindle bootstrap --env bell/,
    );
  }, 120_000);
});

describe('spindle bootstrap', () => {
  let server: Teacher;
  beforeAll(async () => {
    server = await teacher(knowsTheTool);
  });
  afterAll(() => server.close());

  it("fine-tunes the shipped base on a remote model's demonstrations: held-out success rises from where it was", async () => {
    process.env.TEACHER_KEY = 'sk-test';
    const r = await cli(
      dir,
      'bootstrap',
      '--env-file',
      'bell.js',
      '--config',
      'run.yaml',
      '--from',
      'remote',
      '--endpoint',
      server.url,
      '--remote-model',
      'teacher',
      '--api-key-env',
      'TEACHER_KEY',
      '--demos',
      '12',
      '--sft-epochs',
      '6',
      '--sft-learning-rate',
      '0.01',
      '--steps',
      '0',
      '--output',
      'out',
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(`demonstrations from teacher at ${server.url}: 12 of 12 succeeded \\(stored as run run-`),
    );
    const report = JSON.parse(readFileSync(join(dir, 'out/report.json'), 'utf8'));
    expect(report.baseline.n).toBe(8);
    expect(report.afterSft.successes).toBeGreaterThan(report.baseline.successes);
    expect(r.out).toMatch(/held-out success: before \d+\/8 = .* → after SFT \d+\/8/);
    expect(existsSync(join(dir, 'out/sft-adapter.zip'))).toBe(true);
    // The server saw the environment's own tool in the system prompt, its model name and the key.
    expect(server.requests.length).toBe(24);
    expect(server.requests[0]).toMatchObject({ model: 'teacher', authorization: 'Bearer sk-test' });
    expect(server.requests[0].messages[0].content).toMatch(/ring/);
  }, 180_000);

  it('a server that never answers and one that answers junk fail naming the endpoint and the fix; an environment without an expert is refused', async () => {
    const silent = await teacher(() => null);
    const junk = await teacher(() => 'RAW:<html>bad gateway</html>');
    try {
      const hung = await cli(
        dir,
        'bootstrap',
        '--env-file',
        'bell.js',
        '--config',
        'run.yaml',
        '--from',
        'remote',
        '--endpoint',
        silent.url,
        '--remote-model',
        'm',
        '--remote-timeout',
        '1',
        '--demos',
        '2',
        '--steps',
        '0',
      );
      expect(hung.code).toBe(1);
      expect(hung.err).toMatch(
        new RegExp(
          `no reply within 1000 ms.*check that it is up and serves /chat/completions under that address, or raise its timeout`,
        ),
      );
      expect(silent.requests.length).toBe(1); // stopped at the first failure, not once per task
      const bad = await cli(
        dir,
        'bootstrap',
        '--env-file',
        'bell.js',
        '--config',
        'run.yaml',
        '--from',
        'remote',
        '--endpoint',
        junk.url,
        '--remote-model',
        'm',
        '--demos',
        '2',
        '--steps',
        '0',
      );
      expect(bad.code).toBe(1);
      expect(bad.err).toMatch(/did not return JSON: <html>bad gateway<\/html>/);
    } finally {
      await silent.close();
      await junk.close();
    }
    const usage = await cli(dir, 'bootstrap', '--env-file', 'bell.js', '--from', 'remote');
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/--from remote needs --endpoint URL/);
    const text = readFileSync(BELL, 'utf8');
    (await import('node:fs')).writeFileSync(
      join(dir, 'mute.js'),
      `${text.slice(0, text.indexOf('  expert()')).replace("name: 'bell'", "name: 'mute_bell'")}};\n`,
    );
    const noExpert = await cli(dir, 'bootstrap', '--env-file', 'mute.js', '--config', 'run.yaml', '--steps', '0');
    expect(noExpert.code).toBe(1);
    expect(noExpert.err).toMatch(/mute_bell has no expert\(task\), so it cannot demonstrate itself/);
  }, 180_000);
});
