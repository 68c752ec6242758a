/**
 * The module host's side (workers/module-host.*.ts): one LocalModuleRunner in this thread, answering
 * the messages of module-host-protocol.ts. Sync answers go into the shared buffer, then wake the
 * caller; async ones are replies. Calls run one at a time, in the order they came.
 */
import type { Task } from '../contracts.ts';
import type { RngState } from '../rng.ts';
import { errorData, FLAG, HEADER_BYTES, LENGTH, STATUS, type FromHost, type ToHost } from './module-host-protocol.ts';
import { LocalModuleRunner, type ToolCallRecord, type ToolSession } from './module-runner.ts';

export interface HostPort {
  post(message: FromHost): void;
  onMessage(listener: (message: ToHost) => void): void;
}

export function serveModuleHost(port: HostPort): void {
  const host: HostState = { runner: null, header: null, data: null, sessions: new Map(), nextSession: 1 };
  // One call at a time: a later call waits for the one before (QuickJS contexts are not re-entrant).
  let queue: Promise<unknown> = Promise.resolve();
  port.onMessage((message) => {
    queue = queue.then(() => handleMessage(host, port, message));
  });
}

/** What the host holds between calls: the module's runner, the shared answer buffer, the open tool sessions. */
interface HostState {
  runner: LocalModuleRunner | null;
  header: Int32Array | null;
  data: Uint8Array | null;
  sessions: Map<number, ToolSession>;
  nextSession: number;
}

async function handleMessage(host: HostState, port: HostPort, message: ToHost): Promise<void> {
  if (message.kind === 'open') {
    host.header = new Int32Array(message.shared, 0, 3);
    host.data = new Uint8Array(message.shared, HEADER_BYTES);
    try {
      host.runner = await LocalModuleRunner.open(message.source, message.options);
      port.post({ kind: 'opened', info: host.runner.info });
    } catch (e) {
      port.post({ kind: 'failed', error: errorData(e) });
    }
  } else if (message.kind === 'sync') {
    try {
      const [a] = message.args;
      const value =
        message.op === 'sample'
          ? host.runner!.sample(a as RngState, message.args[1] as number)
          : message.op === 'expert'
            ? host.runner!.expert(a as Task)
            : host.runner!.chance(a as number);
      answerSync(host, 0, value);
    } catch (e) {
      answerSync(host, 1, errorData(e));
    }
  } else {
    try {
      port.post({ kind: 'reply', id: message.id, ok: true, value: await runAsync(host, message.op, message.args) });
    } catch (e) {
      port.post({ kind: 'reply', id: message.id, ok: false, error: errorData(e) });
    }
  }
}

/** A sync call's answer, written into the shared buffer before the caller is woken. */
function answerSync(host: HostState, status: 0 | 1, value: unknown): void {
  const header = host.header!;
  const data = host.data!;
  let bytes = new TextEncoder().encode(JSON.stringify(status === 0 ? { value } : value));
  if (bytes.length > data.length) {
    status = 1;
    bytes = new TextEncoder().encode(
      JSON.stringify(
        errorData(
          new Error(`the result is ${bytes.length} bytes of JSON, above the ${data.length} a module call may return`),
        ),
      ),
    );
  }
  data.set(bytes); // encoded apart, then copied: encoders do not write into shared memory everywhere
  Atomics.store(header, STATUS, status);
  Atomics.store(header, LENGTH, bytes.length);
  Atomics.store(header, FLAG, 1);
  Atomics.notify(header, FLAG);
}

async function runAsync(host: HostState, op: string, args: unknown[]): Promise<unknown> {
  const runner = host.runner!;
  switch (op) {
    case 'evaluate':
      return runner.evaluate(args[0] as Task, args[1], args[2] as ToolCallRecord[]);
    case 'openSession': {
      const id = host.nextSession++;
      host.sessions.set(id, await runner.openSession(args[0] as Task, args[1] as number));
      return id;
    }
    case 'callTool': {
      const session = host.sessions.get(args[0] as number);
      if (!session) throw new Error('this tool session was closed');
      return session.call(args[1] as string, args[2] as Record<string, unknown>);
    }
    case 'closeSession':
      host.sessions.get(args[0] as number)?.dispose();
      host.sessions.delete(args[0] as number);
      return null;
    default:
      throw new Error(`unknown module host call ${op}`);
  }
}
