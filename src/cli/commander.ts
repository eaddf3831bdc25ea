// commander, required rather than imported: node's ESM wrapper of a CommonJS package (its exports
// lexed from the source, then linked) cost every command a few milliseconds of its start-up.
// The CLI's files take commander's classes from here.
import type * as Commander from "commander";
import { createRequire } from "node:module";

export const { Argument, Command, CommanderError, Option } = createRequire(import.meta.url)(
  "commander",
) as typeof Commander;
export type Argument = Commander.Argument;
export type Command = Commander.Command;
export type CommanderError = Commander.CommanderError;
export type Option = Commander.Option;
