import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/model/backend.ts';
import { presetConfig } from '../src/model/config.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { generate } from '../src/model/sampling.ts';
await initBackend({ forced: 'wasm' });
const model = TransformerModel.create(presetConfig('micro', 266), 2);
await generate(model, [[1, 2]], { maxNewTokens: 4, temperature: 0, seed: 1 });
let t = performance.now();
const out = await generate(model, [[256, 10, 20, 30]], { maxNewTokens: 256, temperature: 0, seed: 1 });
console.log('tok/s', (out.tokens[0].length / ((performance.now() - t) / 1000)).toFixed(0));
// one decode step profile
let cache = model.emptyCache();
const pre = tf.tidy(() => { const r = model.forward([[256, 10, 20, 30]], { cache, lastOnly: true }); return [r.logits, ...r.cache!.k, ...r.cache!.v]; });
const L = model.config.numLayers;
cache = { k: pre.slice(1, 1 + L) as tf.Tensor4D[], v: pre.slice(1 + L) as tf.Tensor4D[], length: 4 } as any;
const info = await tf.profile(() => { const r = model.forward([[5]], { cache, lastOnly: true }); return r.logits; });
const by = new Map<string, { n: number; ms: number }>();
for (const k of info.kernels) { const e = by.get(k.name) ?? { n: 0, ms: 0 }; e.n++; e.ms += Number(k.kernelTimeMs); by.set(k.name, e); }
console.log('kernels', info.kernels.length);
console.log([...by].sort((a, b) => b[1].n - a[1].n).map(([k, v]) => `${k} ${v.n} ${v.ms.toFixed(2)}ms`).join('\n'));
// time of a decode step without profile
t = performance.now();
for (let i = 0; i < 50; i++) { const l = tf.tidy(() => { const r = model.forward([[5]], { cache, lastOnly: true }); tf.dispose([...r.cache!.k, ...r.cache!.v]); return r.logits; }); await l.data(); l.dispose(); }
console.log('step ms', ((performance.now() - t) / 50).toFixed(2));
