/**
 * Browser only: where the engine worker gets a run's base model. `spindle-base` is the shipped model,
 * emitted by Vite as files of the app itself (models/spindle-base: config.json, model.safetensors and its
 * tokenizer files), so nothing is fetched from elsewhere; an http(s) URL or a same-origin path is an HF-layout folder.
 *
 * The shipped files are found with `import.meta.glob` rather than plain imports so that a checkout
 * without the trained model (it is built by `npm run model:base`) still builds; loading it then fails
 * with a message that says how to make it.
 */
import type { FileSource } from '../../hub/hf-layout.ts';
import { loadHfModel, type LoadedModel } from '../../hub/hf.ts';

const SHIPPED = import.meta.glob(
  '../../../models/spindle-base/{config.json,model.safetensors,tokenizer.json,tokenizer_config.json}',
  { query: '?url', import: 'default', eager: true },
) as Record<string, string>;

const SHIPPED_MODEL = 'spindle-base';

/** The shipped model's file URLs by file name (empty when the model is not in this build). */
function shippedModelFiles(): Record<string, string> {
  return Object.fromEntries(Object.entries(SHIPPED).map(([path, url]) => [path.slice(path.lastIndexOf('/') + 1), url]));
}

/** Null when the shipped model can be loaded, else why not (for the UI's "local model" option). */
export function shippedModelMissing(): string | null {
  const files = shippedModelFiles();
  const missing = ['config.json', 'model.safetensors'].filter((name) => !files[name]);
  return missing.length
    ? `the shipped model is not in this build (models/spindle-base/${missing.join(', ')} missing: run \`npm run model:base\`, then rebuild)`
    : null;
}

async function fetchBlob(url: string, what: string): Promise<Blob> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`Loading ${what} failed: GET ${url} answered HTTP ${response.status}.`);
  return response.blob();
}

/**
 * An HF folder over HTTP. A file the server does not have is a 404, or, on hosts that answer every
 * path with the app's index.html (single-page-app fallback, as `vite preview` does), an HTML page:
 * both mean "absent", so the optional files (tokenizer.json for byte-tokenizer models) are skipped.
 */
export function webFolder(base: string): FileSource {
  const root = base.endsWith('/') ? base : `${base}/`;
  return {
    description: root,
    async read(name) {
      const response = await fetch(root + name);
      if (response.status === 404 || (response.headers.get('content-type') ?? '').includes('text/html')) return null;
      if (!response.ok) throw new Error(`GET ${root + name} failed: HTTP ${response.status} ${response.statusText}`);
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}

/** Loads `base_model` from a run config (the backend must be initialised first). */
export async function loadBrowserModel(
  baseModel: string,
  options: { quantization?: 'none' | 'int8' } = {},
): Promise<LoadedModel> {
  if (baseModel === SHIPPED_MODEL) {
    const missing = shippedModelMissing();
    if (missing) throw new Error(`Cannot load "${SHIPPED_MODEL}": ${missing}.`);
    const files = shippedModelFiles();
    const blobs: Record<string, Blob> = {};
    for (const [name, url] of Object.entries(files)) blobs[name] = await fetchBlob(url, `${SHIPPED_MODEL}/${name}`);
    return loadHfModel(blobs, options);
  }
  if (/^https?:\/\//.test(baseModel) || baseModel.startsWith('/')) {
    return loadHfModel(webFolder(new URL(baseModel, self.location.href).href), options);
  }
  throw new Error(
    `model.base_model "${baseModel}" cannot be loaded in the browser: use "${SHIPPED_MODEL}" or the URL of a Hugging Face-layout folder (config.json, model.safetensors, tokenizer.json).`,
  );
}
