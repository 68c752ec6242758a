/**
 * The messages between a module host thread (module-host-serve.ts) and the thread that uses it
 * (module-host.ts). Async calls travel as messages with an id; sync calls (`sample`, `expert`, `chance`:
 * `Environment.generate` is synchronous) post a message and block on a shared buffer the host writes
 * the answer into. Errors cross as plain data and are rebuilt as GuestModuleError, line included.
 */
import { GuestModuleError } from '../sandbox/guest-module.ts';
import type { ModuleRunnerOptions } from './module-runner.ts';

export type SyncOp = 'sample' | 'expert' | 'chance';
export type AsyncOp = 'evaluate' | 'openSession' | 'callTool' | 'closeSession';

export type ToHost =
  | { kind: 'open'; source: string; options: ModuleRunnerOptions; shared: SharedArrayBuffer }
  | { kind: 'sync'; op: SyncOp; args: unknown[] }
  | { kind: 'call'; id: number; op: AsyncOp; args: unknown[] };

export type FromHost =
  | { kind: 'opened'; info: import('./module-runner.ts').ModuleInfo }
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; error: ErrorData }
  | { kind: 'failed'; error: ErrorData };

export interface ErrorData {
  message: string;
  line: number | null;
  timedOut: boolean;
  detail: string;
  guest: boolean;
}

/** The shared buffer's layout: three Int32 slots, then the answer's UTF-8 JSON. */
export const FLAG = 0; // 0 while the caller waits, 1 once the answer is written
export const STATUS = 1; // 0 a value, 1 an error
export const LENGTH = 2; // bytes of JSON
export const HEADER_BYTES = 16;
/** Room for a result at the guest's result cap (1M characters of JSON, mostly ASCII). */
export const SHARED_BYTES = HEADER_BYTES + 4 * 1024 * 1024;

export function errorData(e: unknown): ErrorData {
  if (e instanceof GuestModuleError)
    return { message: e.message, line: e.line, timedOut: e.timedOut, detail: e.detail, guest: true };
  const message = e instanceof Error ? e.message : String(e);
  return { message, line: null, timedOut: false, detail: message, guest: false };
}

export function errorFrom(data: ErrorData): Error {
  return data.guest
    ? new GuestModuleError(data.message, data.line, data.timedOut, data.detail)
    : new Error(data.message);
}
