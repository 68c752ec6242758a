/**
 * The pipeline as the commands call it (`pipeline().trainInNode(…)`), loaded once a command runs: main.ts
 * awaits `loadPipeline()` just before `run`. The command list, `--help` and the parser's argument errors
 * need only the option tables, so they never load tfjs, QuickJS, the store or Parquet, which take a
 * second or more to load.
 */
import type * as Api from './pipeline-api.ts';

let api: typeof Api | null = null;

export async function loadPipeline(): Promise<void> {
  api ??= await import('./pipeline-api.ts');
}

export function pipeline(): typeof Api {
  if (!api) throw new Error('A command used the pipeline before main() loaded it (loadPipeline).');
  return api;
}
