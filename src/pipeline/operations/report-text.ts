/**
 * The wording of results and problems, for the CLI (which reaches the stages only through the pipeline):
 * a success count with its interval ("17/32 = 53% [36, 69]") and a count of things ("1 problem", "2 problems"),
 * the same functions the app and the audit print with.
 */
export { countOf, formatSuccessCount } from '../../rollout/success-interval.ts';
