/**
 * Web worker entry of a rollout worker (module worker, spawned by the engine worker): `init` hands it
 * the engine's MessagePort, the judges' keys and the run model's tokenizer; then it runs episodes
 * (agent loop, QuickJS sandbox, judges) with a policy whose tokens come from the engine. The logic is
 * src/pipeline/rollout-worker.ts.
 *
 * The in-browser ONNX judge (a run's `{type: 'model', path: 'models/judge'}`) loads from the app's own
 * assets: the shipped judge files and the onnxruntime-web wasm binary are emitted by Vite, so nothing
 * is fetched from elsewhere. onnxruntime-web is imported only when a run has a model judge.
 */
import * as Comlink from 'comlink';
import type { Judge } from '../src/judge/types.ts';
import { HfTokenizer } from '../src/model/hf-tokenizer.ts';
import type { RolloutWorkerBoot } from '../src/pipeline/browser.ts';
import type { RemoteGenerator } from '../src/pipeline/generation.ts';
import { createRolloutWorkerApi, type RolloutWorkerApi } from '../src/pipeline/rollout-worker-api.ts';
import { secretLookup } from '../src/pipeline/secrets.ts';

const SHIPPED_JUDGE_PATH = 'models/judge';
const SHIPPED_JUDGE = import.meta.glob('../models/judge/{model.onnx,tokenizer.json,judge_config.json}', { query: '?url', import: 'default', eager: true }) as Record<string, string>;

async function fetchBlob(url: string): Promise<Blob> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`In-browser judge: GET ${url} answered HTTP ${response.status}.`);
  return response.blob();
}

/** The shipped judge from the app's assets, or any folder URL with model.onnx + tokenizer.json (+ judge_config.json). */
async function loadModelJudge(id: string, path: string): Promise<Judge> {
  const [{ OnnxJudge, judgeAssetsFromFiles, judgeAssetsFromUrl }, { ortWasmPaths }] = await Promise.all([
    import('../src/judge/onnx-judge.ts'), import('../src/judge/ort-wasm-url.ts'),
  ]);
  let assets;
  if (path.replace(/\/$/, '') === SHIPPED_JUDGE_PATH) {
    const url = (name: string) => SHIPPED_JUDGE[`../models/judge/${name}`];
    if (!url('model.onnx') || !url('tokenizer.json')) throw new Error('The shipped judge (models/judge/model.onnx, tokenizer.json) is not in this build: rebuild it with `npx tsx scripts/build-judge-model.ts`, then rebuild the app.');
    assets = await judgeAssetsFromFiles({
      model: await fetchBlob(url('model.onnx')), tokenizer: await fetchBlob(url('tokenizer.json')),
      config: url('judge_config.json') ? await fetchBlob(url('judge_config.json')) : undefined,
    });
  } else {
    assets = await judgeAssetsFromUrl(new URL(path, self.location.href).href);
  }
  return OnnxJudge.create(assets, { id, ort: { wasmPaths: ortWasmPaths } });
}

let api: RolloutWorkerApi | null = null;

const boot: RolloutWorkerBoot = {
  init(enginePort, policyId, secrets, tokenizer) {
    api = createRolloutWorkerApi(
      Comlink.wrap<RemoteGenerator>(enginePort), policyId, { getSecret: secretLookup(secrets), loadModelJudge },
      tokenizer ? HfTokenizer.fromJson(tokenizer.json, tokenizer.config, { eosTokenId: tokenizer.eosTokenId }) : undefined,
    );
  },
  runEpisode(job) {
    if (!api) throw new Error('This rollout worker was asked for an episode before init(); the engine must call init first.');
    return api.runEpisode(job);
  },
};

Comlink.expose(boot);
