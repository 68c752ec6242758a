/** The command table: `spindle <name>`; multi-word names are subcommands (`export adapter`). */
import type { Command } from '../command.ts';
import { bootstrap } from './bootstrap.ts';
import { calibrateCommand } from './calibrate.ts';
import { collect } from './collect.ts';
import { configCheck, configInit, configSet } from './config.ts';
import { envs, envsAdd, envsAudit, envsRemove } from './envs.ts';
import { evaluate } from './eval.ts';
import { exportAdapter, exportTrajectories } from './export.ts';
import { sft } from './sft.ts';
import { skillsFromTrajectories, skillsToInstructionsCommand } from './skills.ts';
import { train, transferTrain } from './train.ts';
import { transferInit } from './transfer.ts';

export const COMMANDS: Command[] = [
  envs,
  envsAdd,
  envsAudit,
  envsRemove,
  configInit,
  configSet,
  configCheck,
  collect,
  train,
  bootstrap,
  exportTrajectories,
  exportAdapter,
  sft,
  evaluate,
  calibrateCommand,
  transferInit,
  transferTrain,
  skillsFromTrajectories,
  skillsToInstructionsCommand,
];
