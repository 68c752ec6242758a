/** What the commands use of the pipeline, loaded through pipeline.ts (never imported directly). */
export { formatHeldOut } from '../pipeline/operations/bootstrap.ts';
export { deliveredAll, describeDelivery } from '../pipeline/operations/atropos-feed.ts';
export {
  auditOne,
  auditTarget,
  environmentCatalog,
  forgetEnvironment,
  keepEnvironment,
} from '../pipeline/operations/environment-catalog.ts';
export { isUrl } from '../pipeline/operations/environment-url.ts';
export {
  evaluateModel,
  missingLevels,
  modelEvaluationPlan,
  plannedEpisodes,
  runEvaluationPlan,
} from '../pipeline/operations/model-evaluation.ts';
export { adapterBaseModel, latestAdapterZip } from '../pipeline/operations/adapter-export.ts';
export { exportDataset } from '../pipeline/operations/dataset-export.ts';
export { mergedModel } from '../pipeline/operations/merged-export.ts';
export { fitToContext, runSft, sftExamples } from '../pipeline/operations/sft.ts';
export { distilSkills, skillInstructions } from '../pipeline/operations/skills.ts';
export { newestRunOn, transferConfig, transferLearningRate } from '../pipeline/operations/transfer.ts';
export { bootstrapInNode } from '../pipeline/platform/node-bootstrap.ts';
export { collectInNode } from '../pipeline/platform/node-collect.ts';
export {
  MAX_ENVIRONMENT_FILE_BYTES,
  parseRunConfig,
  resolveUserEnvironments,
  storedEnvironmentSources,
} from '../pipeline/platform/node-environments.ts';
export { isRemoteModel, loadPolicyModel, resolveModelPath } from '../pipeline/platform/node-model.ts';
export { findRun, hasNodeStore, runLabel, runLabeller, withNodeStore } from '../pipeline/platform/node-store.ts';
export { configToResume, runTransferSource, trainInNode } from '../pipeline/platform/node-train.ts';
