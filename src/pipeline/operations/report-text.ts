/**
 * The wording of results and problems, for the CLI and the app (which reach the stages only through the
 * pipeline): a success count with its interval ("17/32 = 53% [36, 69]"), a count of things ("1 problem",
 * "2 problems") and a run as its id and name ("run-… (name)"), the same functions the audit prints with.
 */
export { countOf, formatSuccessCount } from '../../rollout/success-interval.ts';
export { runLabel } from '../../store/run-names.ts';
