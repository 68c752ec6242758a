/**
 * Node only: loads a judge model folder (default: the shipped `models/judge/`) from disk. Browser code
 * uses `judgeAssetsFromUrl` or `judgeAssetsFromFiles` in onnx-judge.ts instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  JUDGE_MODEL_FILES,
  OnnxJudge,
  type JudgeModelAssets,
  type JudgeModelConfig,
  type OnnxJudgeOptions,
} from './onnx-judge.ts';

/** The shipped judge model folder, found relative to this file. */
export const SHIPPED_JUDGE_DIR = resolve(fileURLToPath(new URL('../../models/judge/', import.meta.url)));

export function readJudgeAssets(dir: string = SHIPPED_JUDGE_DIR): JudgeModelAssets {
  const path = (name: string) => join(dir, name);
  for (const name of [JUDGE_MODEL_FILES.model, JUDGE_MODEL_FILES.tokenizer]) {
    if (!existsSync(path(name))) {
      throw new Error(
        `Judge model folder ${dir} has no ${name}. Rebuild the shipped one with \`npx tsx scripts/build-judge-model.ts\`.`,
      );
    }
  }
  const configPath = path(JUDGE_MODEL_FILES.config);
  return {
    model: new Uint8Array(readFileSync(path(JUDGE_MODEL_FILES.model))),
    tokenizer: JSON.parse(readFileSync(path(JUDGE_MODEL_FILES.tokenizer), 'utf8')) as Record<string, unknown>,
    config: existsSync(configPath)
      ? (JSON.parse(readFileSync(configPath, 'utf8')) as Partial<JudgeModelConfig>)
      : undefined,
  };
}

export function loadOnnxJudgeFromDir(
  dir: string = SHIPPED_JUDGE_DIR,
  options: OnnxJudgeOptions = {},
): Promise<OnnxJudge> {
  return OnnxJudge.create(readJudgeAssets(dir), options);
}
