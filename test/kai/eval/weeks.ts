import type { ProjectSpec } from "./generate.js";

/**
 * The evaluation set: twelve weeks of three projects, each week with the themes a person reading
 * it would name, in order. Shapes from the origin: weeks of several cycles, of one large
 * capability, quiet weeks, reverts, workflows introduced and fixed or rebuilt, STATE documents
 * with English and Japanese headings, test fixtures that must not lead.
 */
export const PROJECTS: ProjectSpec[] = [
  {
    id: "vpm-mini",
    start: "2026-03-02T00:00:00Z",
    seed: 11,
    headings: { lane: "Layer B / doc_update v1", infra: "Layer A / インフラ", gaps: "Gaps (既知のギャップ)" },
    weeks: [
      {
        name: "the first cycle and Kai",
        stories: [
          { id: "cycle", kind: "cycles", numbers: [1] },
          { id: "kai", kind: "capability", name: "kai", dir: "src/kai", prs: 5, scoped: true, why: "Kai answers a PM's two questions from the repository alone.", things: ["add the lane status reader", "rank what changed", "read STATE per project", "count days in the project's zone", "document the answers"] },
        ],
        noise: 18,
        expected: ["cycle", "kai"],
      },
      {
        name: "five applies, a new assistant, a new workflow, a rebuilt one",
        stories: [
          { id: "cycles", kind: "cycles", numbers: [2, 3, 4, 5, 6] },
          { id: "hana", kind: "capability", name: "hana", dir: "src/hana", prs: 5, scoped: false, why: "Hana routes the board's tasks to the right role, so that nobody has to.", things: ["add the routing table", "route tasks by kind", "post results back to the board", "handle an empty board", "describe the assistant"] },
          { id: "review", kind: "workflow_rebuild", name: "review", prs: 12, why: "The review workflow took 40 minutes and failed on forks; it is rebuilt step by step." },
          { id: "apply-wf", kind: "workflow_new", name: "apply", fixes: 2, why: "Applies a reviewed proposal to STATE when the board says so." },
        ],
        noise: 20,
        expected: ["cycles", "hana", "review", "apply-wf"],
      },
      {
        name: "a quiet week",
        stories: [{ id: "deps", kind: "deps", prs: 4 }],
        noise: 12,
        expected: ["deps"],
      },
      {
        name: "the lane wired end to end",
        stories: [
          { id: "lane", kind: "capability", name: "lane", dir: "src/lane", prs: 15, scoped: false, why: "Wires the doc_update lane end to end: board comment in, STATE PR out.", things: ["add the lane runner", "start Aya from a board comment", "hand Aya's proposal to Sho", "hand Sho's review to Tsugu", "open the apply PR", "post the cycle's end to the board", "retry a failed step", "record each step's run", "resume a waiting step", "stop on a budget", "report the lane's status", "read the lane config", "name the branches per cycle", "clean up merged branches", "document the lane"] },
          { id: "fixtures", kind: "fixtures", prs: 3 },
        ],
        noise: 16,
        expected: ["lane"],
      },
      {
        name: "a revert, the infra section, a nightly workflow",
        stories: [
          { id: "revert", kind: "revert", title: "core: cache parsed configs across runs", why: "The cache served stale configs after an edit; reverting until it is keyed by file hash." },
          { id: "state", kind: "state", title: "Record the runner migration in STATE", section: "infra", text: "Layer A moved to the new runner fleet on Wednesday." },
          { id: "nightly", kind: "workflow_new", name: "nightly", fixes: 1, why: "Runs the slow suites every night instead of on every PR." },
        ],
        noise: 18,
        expected: ["revert", "state", "nightly"],
      },
    ],
  },
  {
    id: "atlas",
    start: "2026-03-02T00:00:00Z",
    seed: 23,
    headings: { lane: "レイヤーB ドキュメント更新 (doc_update)", infra: "レイヤーA 基盤", gaps: "既知のギャップ" },
    weeks: [
      {
        name: "two cycles and the exporter",
        stories: [
          { id: "cycles", kind: "cycles", numbers: [1, 2] },
          { id: "exporter", kind: "capability", name: "exporter", dir: "src/exporter", prs: 6, scoped: true, why: "Exports the board to CSV and JSON for the monthly review.", things: ["add the CSV writer", "add the JSON writer", "stream large boards", "escape multi-line cells", "export from the CLI", "document the formats"] },
          { id: "fixtures", kind: "fixtures", prs: 2 },
        ],
        noise: 20,
        expected: ["cycles", "exporter"],
      },
      {
        name: "search, a release workflow, the infra section",
        stories: [
          { id: "search", kind: "capability", name: "search", dir: "src/search", prs: 4, scoped: false, why: "Search across entries and runs, so that old decisions can be found.", things: ["add the entry index", "search runs by role", "rank results by recency", "document search"] },
          { id: "release", kind: "workflow_new", name: "release", fixes: 2, why: "Publishes a release when a tag is pushed." },
          { id: "state", kind: "state", title: "STATE: 基盤の移行を記録 (record the infra move)", section: "infra", text: "基盤は新しいクラスタに移行済み。" },
        ],
        noise: 18,
        expected: ["search", "release", "state"],
      },
      {
        name: "CI rebuilt, a revert (code lane)",
        lane: "code/code",
        stories: [
          { id: "ci", kind: "workflow_rebuild", name: "ci", prs: 10, why: "CI took 25 minutes; it is rebuilt to cache and shard." },
          { id: "revert", kind: "revert", title: "core: batch board writes", why: "Batched writes lost entries when two workers raced; reverted." },
        ],
        noise: 16,
        expected: ["ci", "revert"],
      },
    ],
  },
  {
    id: "harbor",
    start: "2026-04-06T00:00:00Z",
    seed: 37,
    headings: { lane: "Layer B / doc_update", infra: "Layer A / platform", gaps: "Known gaps" },
    weeks: [
      {
        name: "billing and auth",
        stories: [
          { id: "billing", kind: "capability", name: "billing", dir: "src/billing", prs: 6, scoped: true, why: "Charges teams by the tokens their runs used.", things: ["add usage totals per team", "price runs by model", "write monthly invoices", "handle refunds", "show the bill in the console", "document billing"] },
          { id: "auth", kind: "capability", name: "auth", dir: "src/auth", prs: 3, scoped: false, why: "Tokens per team instead of one shared secret.", things: ["add team tokens", "rotate tokens", "refuse expired tokens"] },
          { id: "deps", kind: "deps", prs: 3 },
        ],
        noise: 18,
        expected: ["billing", "auth"],
      },
      {
        name: "a cycle, webhooks, the platform section",
        stories: [
          { id: "cycle", kind: "cycles", numbers: [3] },
          { id: "webhooks", kind: "capability", name: "webhooks", dir: "src/webhooks", prs: 3, scoped: true, why: "Tells other tools when a cycle ends.", things: ["add signed webhooks", "retry failed deliveries", "list deliveries"] },
          { id: "state", kind: "state", title: "Record the platform upgrade in STATE", section: "infra", text: "Platform upgraded to the new database." },
        ],
        noise: 18,
        expected: ["cycle", "webhooks", "state"],
      },
      {
        name: "notifications, titled every which way",
        stories: [
          {
            id: "notify",
            kind: "capability",
            name: "notify",
            dir: "src/notify",
            prs: 5,
            scoped: false,
            why: "Teams asked to hear when a cycle ends without watching the board.",
            things: ["post to Slack", "retry on 429", "email channel", "per-team settings", "document notifications"],
            titles: ["Send a Slack message when a cycle ends", "Retry Slack posts on 429", "Add an email channel beside Slack", "notify: per-team channel settings", "Document how teams get told"],
          },
          { id: "deps", kind: "deps", prs: 2 },
        ],
        noise: 16,
        expected: ["notify"],
      },
      {
        name: "a quiet week with the operator guide",
        stories: [{ id: "guide", kind: "docs", name: "operator", prs: 3, why: "The operator guide still described the old deployment." }],
        noise: 14,
        expected: ["guide"],
      },
    ],
  },
];
