import type { Command } from '../command.ts';
import { configCheck, configInit, configSet } from './config.ts';

export const COMMANDS: Command[] = [configInit, configSet, configCheck];
