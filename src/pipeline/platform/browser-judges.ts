/**
 * Judges on a page or in a worker of the browser app: the in-browser ONNX judge loaded from the app's
 * own assets (the shipped judge files and the onnxruntime-web wasm are emitted by Vite, so nothing is
 * fetched from elsewhere; onnxruntime-web is imported only when a model judge is built).
 */
import type { Judge } from '../../judge/types.ts';

const SHIPPED_JUDGE_PATH = 'models/judge';
const SHIPPED_JUDGE = import.meta.glob('../../../models/judge/{model.onnx,tokenizer.json,judge_config.json}', {
  query: '?url',
  import: 'default',
  eager: true,
}) as Record<string, string>;

async function fetchBlob(url: string): Promise<Blob> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`In-browser judge: GET ${url} answered HTTP ${response.status}.`);
  return response.blob();
}

/** The shipped judge from the app's assets, or any folder URL with model.onnx + tokenizer.json (+ judge_config.json). */
export async function loadBrowserModelJudge(id: string, path: string): Promise<Judge> {
  const [{ OnnxJudge, judgeAssetsFromFiles, judgeAssetsFromUrl }, { ortWasmPaths }] = await Promise.all([
    import('../../judge/onnx-judge.ts'),
    import('../../judge/ort-wasm-url.ts'),
  ]);
  let assets;
  if (path.replace(/\/$/, '') === SHIPPED_JUDGE_PATH) {
    const url = (name: string) => SHIPPED_JUDGE[`../../../models/judge/${name}`];
    if (!url('model.onnx') || !url('tokenizer.json'))
      throw new Error(
        'The shipped judge (models/judge/model.onnx, tokenizer.json) is not in this build: rebuild it with `npx tsx scripts/build-judge-model.ts`, then rebuild the app.',
      );
    assets = await judgeAssetsFromFiles({
      model: await fetchBlob(url('model.onnx')),
      tokenizer: await fetchBlob(url('tokenizer.json')),
      config: url('judge_config.json') ? await fetchBlob(url('judge_config.json')) : undefined,
    });
  } else {
    assets = await judgeAssetsFromUrl(new URL(path, self.location.href).href);
  }
  return OnnxJudge.create(assets, { id, ort: { wasmPaths: ortWasmPaths } });
}
