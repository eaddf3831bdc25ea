/**
 * Lattice: the protocol between a sprite and its supervisor (spec
 * `lattice-communication-protocol-v1.md`). Public API — kept stable for the supervisor:
 *
 * Protocol (protocol/events.ts)
 *   PROTOCOL_VERSION "v1", EVENT_PREFIX "LATTICE_EVENT ", EVENT_TYPES, KNOWN_ACTIONS,
 *   ADJUSTMENT_TYPES, PROPOSAL_SCOPES, CHECKPOINT_ID (regex), isEventType(s)
 *   LatticeEventSchema (discriminated union on event_type), one `<Type>Event` schema and one
 *   `<Type>Payload` schema per event type, PAYLOAD_SCHEMAS[type], ResumeSchema, ExpectedInputsSchema
 *   types: LatticeEvent, EventType, EventOf<T>, PayloadOf<T>, PayloadInputOf<T>, Resume, ResumeInput
 *
 * expected_inputs (protocol/inputs.ts)
 *   parseInputType(s) → {ok, type} | {ok:false, error}; formatInputType(type)
 *   checkInputs(inputs, expected, {allowExtra?}) → string[] ("inputs.x[1]: expected string, got integer")
 *   assertInputs(…) throws UsageError code "invalid_resume_inputs"
 *
 * Parsing stdout (protocol/parser.ts)
 *   new LineSplitter(maxLineBytes?).push(Buffer) / .end() → RawLine[] (protocol/lines.ts);
 *   classifyStdoutLine(rawLine, maxLineBytes, redact?) → ParsedLine
 *   ParsedLine = {kind:"event", line_no, id, event, raw} | {kind:"log", line_no, text}
 *              | {kind:"protocol_error", line_no, reason, excerpt}
 *   eventId(rawEvent) = sha256 of canonical JSON (identical for the stdout and outbox copies)
 *   redactEvent(redactor, json, ts, id) → {json, timestamp, id}: as stored; a redacted event's id is
 *     eventId of its redacted form (an id never confirms a guessed secret)
 *   parseEventJson(text) → {ok, id, event, raw} | {ok:false, reason}
 *
 * Outbox (protocol/outbox.ts)
 *   outboxPath(ws), latticeDir(ws), appendOutbox(path, event) (fsync'd line append)
 *   readOutbox(path, from = OUTBOX_START, {maxLineBytes?, redact?}) → {items, next:{offset,line_no}, torn}
 *     a torn last line (no newline) is reported in `torn`, not consumed, not an error;
 *     ConflictError "outbox_truncated" when the file shrank below `from.offset`
 *
 * Resume (protocol/resume.ts)
 *   readResume(ws, {mark?}) → {resume|null, replayed, key}; markResumed(ws, key);
 *   writeResume(ws, resume) → key (supervisor side: validated, atomic, mode 0600)
 *   resumePath(ws), resumedMarkerPath(ws)  (marker `.lattice/resumed`: processed keys, one a line)
 *   removeResume(ws): the supervisor removes a resume.json that carried a credential once read
 *
 * Checkpoints (checkpoint/)
 *   createCheckpoint(ws, dir) → {id, created_at, workspace, files, bytes, hashed_files, new_blobs, new_bytes}
 *   restoreCheckpoint(ws, dir, id) → {id, written, removed, unchanged}
 *   checkpointExists(dir, id), readManifest(dir, id), listCheckpoints(dir), pruneCheckpoints(dir, keep)
 *   defaultCheckpointDir(ws, env): $LATTICE_CHECKPOINT_DIR or <ws parent>/.lattice-checkpoints/<ws name>
 *   new CheckpointVault(dir): the supervisor's store, out of the sprites' reach; .adopt(run, spriteDir, id)
 *     takes a WAITING checkpoint in (every blob checked by its hash), .restore(run, id, ws) restores from it
 *   All synchronous. `.lattice/` is excluded and survives restore; `.git/` is included. Nothing a
 *   restore does follows a link; manifests list each path once.
 *
 * Sprite SDK (sprite/, also the package subpath `pmagent/sprite`)
 *   new Sprite({spriteId?, workItemId?, workspace?, checkpointDir?, env?, write?, clock?})
 *   .info .phaseStarted .phaseFinished .actionRequest .artifact .waiting .completed .error
 *   .environmentProposal .emit(type, payload) .checkpoint() → id .readResume({mark?})
 */
export * from "./protocol/index.js";
export {
  defaultCheckpointDir,
  createCheckpoint,
  restoreCheckpoint,
  checkpointExists,
  readManifest,
  listCheckpoints,
  pruneCheckpoints,
  CheckpointVault,
  type AdoptResult,
  type Manifest,
  type ManifestEntry,
  type CheckpointSummary,
  type CreateResult,
  type RestoreResult,
  type PruneResult,
} from "./checkpoint/index.js";
export { Sprite, spriteContext, DEFAULT_WORKSPACE, type SpriteOptions } from "./sprite/index.js";

/*
 * Supervisor (runs, events, worker, resume, crash recovery) — extension points for actions and
 * environments:
 *   new Supervisor({store, project, hooks?: {actions?, proposals?, environment?, gate?}, …})
 *   .startRun({role, entryId?, command?, workspace?, worker?, timeoutS?}) → settled RunRecord
 *   .resumeRun(runId, {inputs, context?, secretInputs?, failure?, fromAction?}) → {run, noop, held?, finished}
 *   .cancel(runId, reason?), .reconcile() (after a crash), .syncEntry(run), .runs (RunStore)
 *   ActionSink.onActionRequest({run, event, redelivery}): every newly stored ACTION_REQUEST, again
 *     after a crash for those not yet marked dispatched; the resolved value is kept on the event
 *     (`dispatch`). A blocking action calls `resumeRun(run.id, {inputs: result, fromAction: true})`
 *     (or `failure`); a result short of `expected_inputs` is held on the run (`waiting.context`)
 *     for a person's resume, which carries it in its `context`.
 *     Without a sink, the action is recorded failed and a blocked sprite is resumed with the error
 *     in `context.error`.
 *   ProposalSink.onEnvironmentProposal(ctx): every newly stored ENVIRONMENT_PROPOSAL (same rules).
 *   RunEnvironmentProvider.adjustmentsFor(role, {entry, runId}) → {preinstall[], env{}} before each launch.
 *   RunGate.decide({role, entry, command}) → {decision: ALLOW|DENY|CONDITIONAL, reasoning, conditions}.
 *   Worker({supervisor, roles, …}).run(signal): claims entries (pick rule, leases, gate) and runs them.
 *   Crash-test harness for sinks: test/lattice/harness.ts. The composition of a project's
 *   supervisor from its config (gate, action and proposal sinks, notifiers) is in src/app/.
 */
export * from "./runs/index.js";
export * from "./supervisor/index.js";
export { dieWithParent, findExecutable, killGroup, processAlive, SETPRIV } from "./sandbox/index.js";
export { RunIngestor, INGEST_STORE_FAULT, type IngestOptions } from "./ingest/index.js";
export {
  spriteEnv,
  checkExtraEnv,
  prepareRunDir,
  selfCommand,
  readViolations,
  findSandboxTool,
  sandboxArgv,
  helperSandbox,
  hiddenFromSprites,
  type SandboxMode,
  type SandboxSpec,
} from "./sandbox/index.js";

// Actions, credentials and environment proposals (supervisor side); the forge is its own module (src/forge).
export * from "./actions/index.js";
export * from "./environment/index.js";
export {
  AGENT_NAMES,
  agentArgv,
  configuredAgents,
  type ConfiguredAgent,
  agentCommand,
  agentOfCommand,
  defaultEndpoint,
  agentStdin,
  driverFor,
  findAgentCli,
  isAgentName,
  protocolInstructions,
  runAgent,
  runnerArgv,
  taskText,
  type AgentName,
  type AgentRunOptions,
} from "./agents/index.js";
