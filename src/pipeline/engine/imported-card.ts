/**
 * The model card the Models screen shows for an imported Hugging Face model: what Spindle made of it
 * on this device (architecture, parameters, how its weights are held, its chat format, the memory a
 * LoRA update needs, what a run config names to train it), followed by the repository's own README.md
 * when it has one (its front matter stays first, where the card reader expects it).
 */
import type { LoadedModel } from '../../hub/hf.ts';
import { estimateMemory, formatBytes } from '../../model/memory.ts';
import { chatFormatSummary } from '../../format/conversation.ts';

const FAMILY_NAMES: Record<string, string> = { llama: 'Llama', qwen2: 'Qwen2', qwen3: 'Qwen3' };

function splitFrontMatter(readme: string): { frontMatter: string; body: string } {
  const lines = readme.replace(/\r\n/g, '\n').split('\n');
  if (lines[0]?.trim() !== '---') return { frontMatter: '', body: readme };
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === '---');
  if (end < 0) return { frontMatter: '', body: readme };
  return { frontMatter: lines.slice(0, end + 1).join('\n') + '\n\n', body: lines.slice(end + 1).join('\n') };
}

export function importedModelCard(name: string, baseModel: string, loaded: LoadedModel, readme: string | null): string {
  const c = loaded.config;
  const parameters = loaded.model.parameterCount();
  const int8 = loaded.linearPrecision === 'int8';
  const half = loaded.linearPrecision !== 'float32' && !int8;
  const held = {
    fileBytesPerParam: half ? 2 : 4,
    halfLinears: half,
    quantization: int8 ? ('int8' as const) : ('none' as const),
  };
  const short = estimateMemory(c, { ...held, sequence: 128 });
  const long = estimateMemory(c, { ...held, sequence: 512 });
  const rope = c.ropeScaling
    ? `theta ${c.ropeTheta}, ${c.ropeScaling.type} scaling ×${c.ropeScaling.factor}`
    : `theta ${c.ropeTheta}`;
  const rows: [string, string][] = [
    [
      'architecture',
      `${FAMILY_NAMES[c.family] ?? c.family}: ${c.numLayers} layer${c.numLayers === 1 ? '' : 's'}, hidden ${c.hiddenSize}, ${c.numHeads} query / ${c.numKvHeads} key-value heads of ${c.headDim}, MLP ${c.intermediateSize}${c.qkNorm ? ', q/k norms' : ''}${c.tieWordEmbeddings ? ', tied embeddings' : ''}`,
    ],
    ['parameters', parameters >= 1e6 ? `${(parameters / 1e6).toFixed(1)}M` : `${(parameters / 1e3).toFixed(1)}k`],
    [
      'vocabulary, context',
      `${c.vocabSize.toLocaleString('en-US')} tokens, ${c.maxPositions.toLocaleString('en-US')} positions (RoPE ${rope})`,
    ],
    [
      'weights on this device',
      int8
        ? "the layers' projections in int8 with a float32 scale per output channel (float32 did not fit this device's memory; frozen, LoRA trains in float32; train it with `model.quantization: int8`), the rest float32"
        : half
          ? `the layers' projections in ${loaded.linearPrecision} (half the memory; frozen, LoRA trains in float32), the rest float32`
          : 'float32',
    ],
    ['chat format', chatFormatSummary(loaded.tokenizer)],
    [
      'memory',
      `about ${formatBytes(short.weightBytes)} of weights; a LoRA update on one sequence of 128 tokens about ${formatBytes(short.trainPeakBytes)}, of 512 about ${formatBytes(long.trainPeakBytes)}`,
    ],
    [
      'train it',
      `\`model.base_model: ${baseModel}\` (choose it on the Train screen, or set it in the YAML; Playground plays it now)`,
    ],
  ];
  const summary = `# ${name}\n\nImported into Spindle. What it is here:\n\n| | |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|')} |`).join('\n')}\n`;
  if (!readme?.trim()) return `${summary}\nThe repository has no README.md (model card).\n`;
  const { frontMatter, body } = splitFrontMatter(readme);
  return `${frontMatter}${summary}\n## The repository's model card\n\n${body.trim()}\n`;
}
