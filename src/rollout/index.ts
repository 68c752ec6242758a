/** Rollouts: the agent loop, group sampling, policies (scripted, remote), expert transcripts, Atropos groups. */
export { runEpisode, type EpisodeOptions } from './episode.ts';
export { runGroup, groupSeeds, type GroupOptions } from './group.ts';
export type { EpisodeEvent, EpisodeListener } from './events.ts';
export { ScriptedPolicy, type Script, type ScriptedPolicyOptions } from './scripted-policy.ts';
export { RemotePolicy, type RemotePolicyOptions } from './remote-policy.ts';
export { expertTrajectory, expertTranscripts, type ExpertOptions, type ExpertBatchOptions } from './expert.ts';
export { toScoredGroup, MASK_IGNORE, LOGPROB_PLACEHOLDER, type ScoredGroupOptions } from './scored-group.ts';
export type { Policy, PolicyContext, PolicyTurn, GenerateOptions } from './policy.ts';
