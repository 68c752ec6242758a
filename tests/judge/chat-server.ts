/**
 * A real chat-completions server on 127.0.0.1 for remote judge tests. Each request takes the fault
 * scripted for its model (`byModel`, every time), else the next one from a queue (or the default reply
 * when it is empty), and records what it received. Judges that call at once reach the server in any
 * order: give each its own model and script it by model.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export type Fault =
  | { kind: 'ok'; content: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { kind: 'slow'; ms: number; content: string }
  | { kind: 'status'; status: number; body?: string; retryAfter?: string }
  | { kind: 'raw'; body: string }
  | { kind: 'empty_choices' }
  | { kind: 'hang_up' }
  /** Replies with the request's messages, as a broken server or a base model that repeats its prompt does. */
  | { kind: 'echo' };

export interface Received {
  authorization: string | undefined;
  body: { model: string; temperature: number; messages: { role: string; content: string }[] };
}

export interface ChatServer {
  baseUrl: string;
  queue: Fault[];
  byModel: Map<string, Fault>;
  received: Received[];
  close(): Promise<void>;
}

const GOOD = JSON.stringify({
  task_completion: 9,
  reasoning_quality: 8,
  tool_use: 9,
  error_handling: 7,
  efficiency: 8,
  overall: 0.85,
  rationale: 'Correct answer with one tool call.',
});

function reply(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(body);
}

function completion(content: string, usage = { prompt_tokens: 120, completion_tokens: 30 }): string {
  return JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage,
  });
}

export async function startChatServer(defaultContent: string = GOOD): Promise<ChatServer> {
  const queue: Fault[] = [];
  const byModel = new Map<string, Fault>();
  const received: Received[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let data = '';
    for await (const chunk of req) data += chunk;
    const body = JSON.parse(data) as Received['body'];
    received.push({ authorization: req.headers.authorization, body });
    if (req.url !== '/v1/chat/completions') return reply(res, 404, '{"error":"not found"}');
    const fault = byModel.get(body.model) ?? queue.shift() ?? { kind: 'ok', content: defaultContent };
    switch (fault.kind) {
      case 'ok':
        return reply(res, 200, completion(fault.content, fault.usage));
      case 'slow': {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) reply(res, 200, completion(fault.content));
        }, fault.ms);
        timers.add(t);
        return;
      }
      case 'status':
        return reply(
          res,
          fault.status,
          fault.body ?? '{"error":"boom"}',
          fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {},
        );
      case 'raw':
        return reply(res, 200, fault.body);
      case 'empty_choices':
        return reply(res, 200, JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 0 } }));
      case 'echo':
        return reply(res, 200, completion(body.messages.map((m) => m.content).join('\n')));
      case 'hang_up':
        req.socket.destroy();
        return;
    }
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    queue,
    byModel,
    received,
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The server for a test file: started before its tests, closed after them, its script and record
 * cleared before each test. The object reads through to the running server.
 */
export function useChatServer(defaultContent?: string): ChatServer {
  let started: ChatServer | null = null;
  const live = (): ChatServer => {
    if (!started) throw new Error('useChatServer: the server is read before beforeAll started it');
    return started;
  };
  beforeAll(async () => {
    started = await startChatServer(defaultContent);
  });
  afterAll(async () => {
    await started?.close();
  });
  beforeEach(() => {
    const s = live();
    s.queue.length = 0;
    s.byModel.clear();
    s.received.length = 0;
  });
  return {
    get baseUrl() {
      return live().baseUrl;
    },
    get queue() {
      return live().queue;
    },
    get byModel() {
      return live().byModel;
    },
    get received() {
      return live().received;
    },
    close: () => live().close(),
  };
}
