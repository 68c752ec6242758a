/**
 * Exchange formats: datasets out (HF chat JSONL, Parquet, Atropos groups, SFT/DPO pairs), adapters
 * out (PEFT zip, merged HF weights), validated imports back in, skills, and the Atropos API client.
 * The PEFT module pulls in the safetensors codec only (no tfjs).
 */
export { ImportError } from './import-error.ts';
export { toJsonl, jsonlChunks, importJsonlRows } from './jsonl.ts';
export { trajectoryToChatRow, chatRowToTrajectory, parseChatJsonl, type ChatRow, type HfTool } from './hf-chat.ts';
export { trajectoriesToParquet, parquetToTrajectories, PARQUET_COLUMNS, PARQUET_SCHEMA_ID } from './parquet.ts';
export { scoredGroupFromTrajectories, scoredGroupsToJsonl, parseScoredGroupsJsonl, ATROPOS_FIELDS } from './atropos.ts';
export {
  sftRows,
  dpoRows,
  sftRowsFromGroup,
  dpoRowsFromGroup,
  type PairOptions,
  type SftRow,
  type DpoRow,
} from './pairs.ts';
export {
  parseSkill,
  renderSkill,
  skillBody,
  skillsFromTrajectories,
  skillExamples,
  skillsToInstructions,
  taskType,
  mergeJsonl,
  type InstructionRow,
  type SkillExample,
} from './skills.ts';
export {
  importTrajectories,
  importScoredGroups,
  importSkill,
  readTrajectoryFile,
  detectTrajectoryFormat,
  type ImportFile,
  type ImportResult,
  type TrajectoryFormat,
} from './import.ts';
export {
  exportChatJsonl,
  exportTrajectoryJsonl,
  exportParquet,
  exportScoredGroupsJsonl,
  exportSftJsonl,
  exportDpoJsonl,
} from './from-store.ts';
export {
  adapterZip,
  adapterFiles,
  zipFiles,
  readAdapter,
  peftConfigFromRun,
  modelCard,
  mergeAdapterWeights,
  mergedModelFiles,
  checkAdapterTensors,
  moduleShape,
  type PeftConfig,
  type ModelCardInput,
  type ReadAdapterOptions,
} from './peft.ts';
export {
  AtroposClient,
  type AtroposClientOptions,
  type ClientEvent,
  type EnvStatus,
  type RegisterEnvRequest,
  type RegisteredEnv,
} from './atropos-client.ts';
export { checkTrajectory, checkScoredGroup } from './validate.ts';
