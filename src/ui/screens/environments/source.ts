/**
 * What the Environments screen needs from the rest of Spindle: the stored environments, the live check
 * and loading in the engine worker (a user's code never runs on the page), files in and out. The app
 * gives it src/pipeline/app/environments.ts; tests and the demo pass their own.
 */
import type {
  BootstrapChoice,
  BootstrapEvent,
  BootstrapReport,
  BuiltinSummary,
  EnvironmentCheck,
  EnvironmentDraft,
  EnvironmentFailure,
  EnvironmentSummary,
} from '../../../pipeline/app/environments.ts';

export type {
  BootstrapChoice,
  BootstrapEvent,
  BootstrapReport,
  BuiltinSummary,
  EnvironmentCheck,
  EnvironmentDraft,
  EnvironmentFailure,
  EnvironmentSummary,
};
export type HeldOut = BootstrapReport['baseline'];
export type { EnvironmentAudit } from '../../../pipeline/app/environments.ts';

export interface EnvironmentsSource {
  /** The editor's "Load example" (treasure_hunt) and "New" drafts. */
  example(): EnvironmentDraft;
  starter(): EnvironmentDraft;
  list(): Promise<{ user: EnvironmentSummary[]; builtins: BuiltinSummary[] }>;
  open(name: string): Promise<EnvironmentDraft>;
  /** Loads and audits the draft in the engine, each finished part through `onProgress`; `signal` cancels. */
  check(draft: EnvironmentDraft, onProgress: (line: string) => void, signal: AbortSignal): Promise<EnvironmentCheck>;
  /** Stores the draft with the last check's problems (null: not checked); a draft that does not load comes back with its problems. */
  save(
    draft: EnvironmentDraft,
    auditProblems: string[] | null,
  ): Promise<{ ok: true; summary: EnvironmentSummary } | EnvironmentFailure>;
  importFile(file: { name: string; bytes: Uint8Array }): Promise<EnvironmentDraft>;
  importUrl(url: string): Promise<{ draft: EnvironmentDraft; fileName: string }>;
  exportFile(draft: EnvironmentDraft, name: string | null): { fileName: string; mime: string; text: string };
  remove(name: string): Promise<void>;
  /** Demonstrations, SFT, then GRPO on a saved environment (absent: this source cannot train). */
  bootstrap?(
    name: string,
    choice: BootstrapChoice,
    onEvent: (event: BootstrapEvent) => void,
    signal: AbortSignal,
  ): Promise<BootstrapReport>;
}
