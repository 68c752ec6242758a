/**
 * Judges in Node: a model judge (`type: model`) loaded from its folder on disk (judge/onnx-node.ts), the
 * shipped one for `models/judge`, as the browser app loads it from its own assets (browser-judges.ts).
 */
import { resolve } from 'node:path';
import { loadOnnxJudgeFromDir, SHIPPED_JUDGE_DIR } from '../../judge/onnx-node.ts';
import type { Judge } from '../../judge/types.ts';

const SHIPPED_JUDGE_PATH = 'models/judge';

/** The model judge in `path` (a folder with model.onnx and tokenizer.json), relative to `cwd`. */
export function loadNodeModelJudge(id: string, path: string, cwd: string = process.cwd()): Promise<Judge> {
  const dir = path.replace(/\/$/, '') === SHIPPED_JUDGE_PATH ? SHIPPED_JUDGE_DIR : resolve(cwd, path);
  return loadOnnxJudgeFromDir(dir, { id });
}
