import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { migrate, migrations, SqliteStore } from "../../src/store/index.js";
import { LocalForge, ProposalStore } from "../../src/lattice/index.js";
import { runCli } from "../helpers/proc.js";
import { makeProject, makeWorkspace, type TestProject } from "../lattice/fixtures.js";

describe("pmagent env and pmagent prs", () => {
  let p: TestProject;
  let db: string;
  let id: string;

  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, { cwd: p.project.root, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PMAGENT_SQLITE_PATH: db, ...env } });

  beforeEach(async () => {
    p = makeProject();
    db = join(p.dir, "pmagent.db");
    const store = new SqliteStore(db);
    await migrate(store, migrations);
    const ps = new ProposalStore({ store, projectId: "demo", humans: ["Human"] });
    const payload = {
      observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "node: not found" },
      suggested_adjustment: { type: "add_preinstall_step", details: { command: "npm ci" } },
      confidence: 0.8,
      evidence: ["package-lock.json"],
      scope: "repo_specific",
    };
    id = (await ps.record("Aya", "run-1", "ev-1", payload)).proposal.id;
    await ps.record("Aya", "run-2", "ev-2", payload);
    await store.close();
  });
  afterEach(() => p.cleanup());

  it("lists proposals with their count and status", async () => {
    const text = await cli(["env", "list"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`${id}  pending  Aya  add_preinstall_step {"command":"npm ci"}  ×2  [bootstrap, exit 127]\n`);
    const json = await cli(["env", "list", "--format", "json", "--status", "pending", "--role", "Aya"]);
    expect(JSON.parse(json.stdout).items).toMatchObject([{ id, count: 2, status: "pending", role: "Aya", adjustment_type: "add_preinstall_step" }]);
    expect((await cli(["env", "list", "--status", "accepted"])).stdout).toBe("no environment proposals\n");
  });

  it("accepts as a human; the role's environment then has the step", async () => {
    const res = await cli(["env", "accept", id, "--as", "Human"]);
    expect(res.stderr).toBe("");
    expect(res.stdout).toBe(`${id} accepted by Human: Aya add_preinstall_step {"command":"npm ci"}\n`);
    const show = await cli(["env", "show", "Aya"]);
    expect(show.stdout).toBe(`Aya:\n  pre-install (${id}): npm ci\n`);
    const json = JSON.parse((await cli(["env", "show", "Aya", "--format", "json"])).stdout) as { preinstall: unknown[] };
    expect(json.preinstall).toEqual([{ proposal_id: id, command: "npm ci" }]);
    const again = await cli(["env", "reject", id, "--as", "Human"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^pmagent: environment proposal ${id} was already accepted by Human at .* \\[proposal_decided\\]\\n$`));
  });

  it.each([
    [["env", "accept", "ID"], {}, 2, "pmagent: say who decides: pass --as NAME (a human listed in the config's humans) or set PMAGENT_ACTOR [actor_required]\n"],
    [["env", "reject", "ID", "--as", "Aya"], {}, 1, "pmagent: only a human may reject an environment proposal; \"Aya\" is not listed in the config's humans (Human) [not_human]\n"],
    [["env", "accept", "ID"], { PMAGENT_ACTOR: "Sho" }, 1, "pmagent: only a human may accept an environment proposal; \"Sho\" is not listed in the config's humans (Human) [not_human]\n"],
    [["env", "accept", "envp_missing", "--as", "Human"], {}, 1, "pmagent: no environment proposal \"envp_missing\" in project demo: see `pmagent env list` [proposal_not_found]\n"],
    [["env", "show", "Nobody"], {}, 2, "pmagent: role \"Nobody\" is not configured in any lane (configured roles: Aya, Sho, Tsugu, Gen, Hana) [unknown_role]\n"],
  ])("%j fails with a message", async (args, env, code, stderr) => {
    const res = await cli(args.map((a) => (a === "ID" ? id : a)), env);
    expect(res.code).toBe(code);
    expect(res.stderr).toBe(stderr);
  });

  it("refuses an unknown status", async () => {
    const res = await cli(["env", "list", "--status", "maybe"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("error: option '--status <status>' argument 'maybe' is invalid. Allowed choices are pending, accepted, rejected.");
  });

  it("pmagent prs lists the local forge's pull requests", async () => {
    expect((await cli(["prs"])).stdout).toBe("no pull requests\n");
    const store = new SqliteStore(db);
    const forge = new LocalForge({ store, projectId: "demo", root: p.project.root, bareRepo: ".pmagent/forge.git" });
    const ws = makeWorkspace(p.project.root, "ws", "sprite/docs");
    await forge.openPullRequest({ title: "Update docs", body: "", base: "main", head: "sprite/docs", workspace: ws.path });
    await store.close();
    expect((await cli(["prs"])).stdout).toBe(`#1  open  sprite/docs → main  ${ws.sha.slice(0, 12)}  Update docs\n`);
    const json = JSON.parse((await cli(["prs", "--format", "json", "--state", "open"])).stdout) as { items: unknown[]; next: null };
    expect(json.next).toBeNull();
    expect(json.items).toEqual([expect.objectContaining({ number: 1, head: "sprite/docs", base: "main", head_sha: ws.sha, state: "open", url: "pmagent-forge://demo/pulls/1" })]);
    expect((await cli(["prs", "--state", "closed"])).stdout).toBe("no pull requests\n");
    const bad = await cli(["prs", "--state", "weird"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'weird' is invalid. Allowed choices are open, closed, merged, all.");
  });
});
