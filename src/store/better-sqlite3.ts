// better-sqlite3, required rather than imported: node's ES-module wrapper of a CommonJS package
// (its exports lexed from the source) cost every command that opens the store a few milliseconds.
// The store and its checkpointer thread take the driver from here.
import type BetterSqlite3 from "better-sqlite3";
import { createRequire } from "node:module";

export const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
export type Database = BetterSqlite3.Database;
export type Statement = BetterSqlite3.Statement<unknown[]>;
