/**
 * The Lattice protocol as an agent's instructions (its AGENTS.md / CLAUDE.md / GEMINI.md): the
 * essentials of lattice-communication-protocol-v1 with `pmagent emit` and `pmagent checkpoint
 * create` as the commands, and the real paths of this run. In the sandbox the workspace is also
 * mounted at /workspace (the spec's path); outside it only the real path exists.
 */
import { followUpOf } from "../protocol/index.js";

export interface InstructionsInput {
  spriteId: string;
  workItemId: string;
  /** The workspace's real path (the agent's working directory). */
  workspace: string;
  sandboxed: boolean;
}

export function protocolInstructions(i: InstructionsInput): string {
  const where = i.sandboxed ? `${i.workspace} (also mounted at /workspace)` : i.workspace;
  return `# Lattice sprite protocol (v1)

You are running inside a Lattice-managed sprite, supervised by pmagent. Lattice keeps a durable
event log of your work. Your sprite id is \`${i.spriteId}\`; your work item is \`${i.workItemId}\`.
Your workspace is ${where}; work only there.

## Emitting events

Use the \`pmagent\` command on your PATH. It writes each event both ways the protocol requires:
a \`LATTICE_EVENT\` line on stdout and a line appended to \`${i.workspace}/.lattice/outbox.jsonl\`.
Never write or edit the outbox by hand; events are append-only.

    pmagent emit INFO --message "Running the tests" --kind progress
    pmagent emit PHASE_STARTED --phase implement
    pmagent emit PHASE_FINISHED --phase implement --success
    pmagent emit ARTIFACT --kind file --ref path/to/file
    pmagent emit ACTION_REQUEST --action OPEN_PR --param title="…" --param head=branch --blocking
    pmagent emit ENVIRONMENT_PROPOSAL --payload-json '{…}'
    pmagent emit COMPLETED --status success --summary "What you did"
    pmagent emit ERROR --message "What failed"

Your commands, file changes and messages are also recorded by pmagent. If you end without
COMPLETED or ERROR, pmagent records COMPLETED with your last message (or ERROR if you failed).

## Checkpoints and WAITING

When you cannot go on without external input (a decision, a review, a blocking action's result):

1. Bring your work to a stable point.
2. Create a checkpoint: \`chk=$(pmagent checkpoint create)\` (prints its id).
3. Emit WAITING: \`pmagent emit WAITING --reason "…" --checkpoint "$chk" --expect name=string\`
   (types: string, integer, boolean, map, array<T>). Where your shell refuses \`$(…)\`, do both in one
   pipe: \`pmagent checkpoint create | xargs -I{} pmagent emit WAITING --reason "…" --checkpoint {} --expect name=string\`.
4. Stop: end your turn at once. Do no further work after WAITING.

Lattice restores the checkpoint and resumes this session with the inputs; they are also in
\`${i.workspace}/.lattice/resume.json\` (\`pmagent resume-info\` prints it). On resume, emit an INFO
acknowledging it, then continue.

## Hard rules

You MUST NOT:
- push to git (\`git push\`) or edit git remotes (\`git remote add/set-url/remove\`);
- call GitHub (\`gh\`, curl to api.github.com, any GitHub client): emit ACTION_REQUEST instead;
- install runtimes or system packages, or change the environment: emit ENVIRONMENT_PROPOSAL;
- print or log tokens, keys or credentials;
- mutate or delete earlier events;
- continue working after WAITING.

Attempts at the refused commands fail and are recorded as violations.
`;
}

/** The task: the prompt given, and the blackboard entry the run works on (summary, details, target docs, refs). */
export function taskText(
  prompt: string | undefined,
  entry: Record<string, unknown> | null,
  outcomes: readonly string[] = [],
): string {
  const parts: string[] = [];
  if (prompt) parts.push(prompt);
  if (entry) {
    const payload = (entry.payload ?? {}) as Record<string, unknown>;
    parts.push(`Work item ${String(entry.id)} (kind ${String(entry.kind)}, from ${String(entry.from)}):`);
    if (payload.summary !== undefined) parts.push(`Summary: ${String(payload.summary)}`);
    if (payload.details !== undefined)
      parts.push(
        `Details: ${typeof payload.details === "string" ? payload.details : JSON.stringify(payload.details, null, 2)}`,
      );
    const docs = entry.target_docs as unknown[] | undefined;
    if (docs?.length)
      parts.push(`Target documents: ${docs.map((d) => (typeof d === "string" ? d : JSON.stringify(d))).join(", ")}`);
    // The roles contract's object form (source entry, run, branch, commit, pull request, artifacts) or the older list.
    const refs = payload.refs;
    const refLines = Array.isArray(refs)
      ? refs.map((r) => `- ${JSON.stringify(r)}`)
      : refs !== null && typeof refs === "object"
        ? Object.entries(refs).map(([k, v]) => `- ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
        : [];
    if (refLines.length) parts.push(`References:\n${refLines.join("\n")}`);
    const rest = Object.fromEntries(
      Object.entries(payload).filter(([k]) => !["summary", "details", "refs"].includes(k)),
    );
    if (Object.keys(rest).length) parts.push(`Other fields: ${JSON.stringify(rest)}`);
  }
  if (parts.length === 0) parts.push("No task was given: emit ERROR saying so, then stop.");
  if (outcomes.length > 0) {
    parts.push(
      `Your verdict routes the work: finish with \`pmagent emit COMPLETED --status success --outcome <outcome> --summary "…"\`, where the outcome is ${outcomes.map((o) => `\`${o}\``).join(" or ")} to send the work on that way (your summary goes with it: say exactly what must change), or \`approved\` to let it go on.`,
    );
  }
  parts.push(
    "Follow the Lattice sprite protocol in your instructions. Finish with `pmagent emit COMPLETED` (or ERROR).",
  );
  return parts.join("\n\n");
}

/**
 * The message that resumes the agent's session after WAITING: a person's follow-up message first
 * (the resume's `context.message`), then the inputs and the rest of the context.
 */
export function resumeText(resume: Record<string, unknown>): string {
  const context = (resume.context ?? {}) as Record<string, unknown>;
  const message = followUpOf({ context });
  const { message: _message, ...rest } = context;
  const said = message === null ? "" : `\n\nA person answered you with this message:\n\n${message}`;
  return `Lattice resumed you from checkpoint ${String(resume.checkpoint_id)}.${said}\n\nThe inputs you waited for:\n\n${JSON.stringify(resume.inputs ?? {}, null, 2)}\n\nContext: ${JSON.stringify(message === null ? context : rest)}\n\nEmit an INFO acknowledging the resume, then continue the work item.`;
}
