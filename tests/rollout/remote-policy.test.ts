import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemotePolicy } from '../../src/rollout/remote-policy.ts';
import type { GenerateOptions, PolicyContext } from '../../src/rollout/policy.ts';

interface Seen {
  url: string;
  auth: string | undefined;
  body: Record<string, unknown>;
}

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];
/** What the next request gets: status and JSON body, or no answer at all (`silent`). */
let reply: { status: number; body: unknown; silent?: boolean } = { status: 200, body: {} };

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      seen.push({
        url: req.url ?? '',
        auth: req.headers.authorization,
        body: JSON.parse(data) as Record<string, unknown>,
      });
      if (reply.silent) return; // the client's timeout is the only way this request ends
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const context: PolicyContext = {
  messages: [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'What is 2 + 3?' },
    { role: 'assistant', content: '<tool_call>{"name":"calc","arguments":{"expression":"2+3"}}</tool_call>' },
    { role: 'tool', content: '<tool_response>\n5\n</tool_response>' },
  ],
  tools: [],
  tokens: [],
};
const options: GenerateOptions = { seed: 7, sampling: { temperature: 0.3, top_k: 0, top_p: 0.9, max_new_tokens: 50 } };

describe('RemotePolicy', () => {
  it('posts an OpenAI chat completion and returns the text', async () => {
    reply = {
      status: 200,
      body: { choices: [{ message: { role: 'assistant', content: '5' }, finish_reason: 'stop' }] },
    };
    const pieces: string[] = [];
    const policy = new RemotePolicy({ baseUrl: `${baseUrl}/`, model: 'm1', apiKey: 'sk-test' });
    const turn = await policy.generate(context, { ...options, onText: (p) => pieces.push(p) });
    expect(turn).toEqual({ text: '5', tokens: [], logprobs: [], finish_reason: 'stop' });
    expect(pieces).toEqual(['5']);
    const req = seen.at(-1)!;
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.auth).toBe('Bearer sk-test');
    expect(req.body).toMatchObject({ model: 'm1', temperature: 0.3, top_p: 0.9, max_tokens: 50, seed: 7 });
    // Tool turns travel as user turns holding the <tool_response> block.
    expect((req.body.messages as { role: string }[]).map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
    expect(policy.tokenizer).toBeNull();
    expect(policy.id).toBe('remote:m1');
  });

  it('maps finish_reason length, native tool_calls and the temperature override', async () => {
    reply = {
      status: 200,
      body: {
        choices: [
          {
            message: {
              content: 'Let me check.',
              tool_calls: [{ function: { name: 'calc', arguments: '{"expression":"1+1"}' } }],
            },
            finish_reason: 'length',
          },
        ],
      },
    };
    const turn = await new RemotePolicy({ baseUrl, model: 'm2', temperature: 0 }).generate(context, options);
    expect(turn.finish_reason).toBe('length');
    expect(turn.text).toBe('Let me check.\n<tool_call>{"name":"calc","arguments":{"expression":"1+1"}}</tool_call>');
    expect(seen.at(-1)!.body.temperature).toBe(0);
    expect(seen.at(-1)!.auth).toBeUndefined();
  });

  it('reports HTTP errors with the status and body', async () => {
    reply = { status: 401, body: { error: 'bad key' } };
    await expect(new RemotePolicy({ baseUrl, model: 'm' }).generate(context, options)).rejects.toThrow(/401.*bad key/);
  });

  it('reports a reply without choices', async () => {
    reply = { status: 200, body: { nope: true } };
    await expect(new RemotePolicy({ baseUrl, model: 'm' }).generate(context, options)).rejects.toThrow(
      /no choices\[0\]\.message/,
    );
  });

  it('times out', async () => {
    reply = { status: 200, body: {}, silent: true };
    await expect(new RemotePolicy({ baseUrl, model: 'm', timeoutMs: 50 }).generate(context, options)).rejects.toThrow(
      /no reply within 50 ms/,
    );
  });

  it('validates its options', () => {
    expect(() => new RemotePolicy({ baseUrl: 'localhost:8000', model: 'm' })).toThrow(/http:\/\//);
    expect(() => new RemotePolicy({ baseUrl, model: '' })).toThrow(/model is required/);
  });
});
