import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { migrate, SqliteStore } from "../../src/store/index.js";
import { migrations } from "../../src/app/index.js";
import { ProposalStore } from "../../src/lattice/index.js";
import { LocalForge } from "../../src/forge/index.js";
import { runCli } from "../helpers/proc.js";
import { makeProject, makeWorkspace, type TestProject } from "../lattice/fixtures.js";

describe("pmagent env and pmagent prs", () => {
  let p: TestProject;
  let db: string;
  let id: string;

  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, {
      cwd: p.project.root,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PMAGENT_SQLITE_PATH: db, ...env },
    });

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
    expect(text.stdout).toBe(
      `${id}  pending  Aya  add_preinstall_step {"command":"npm ci"}  ×2  [bootstrap, exit 127]\n`,
    );
    const json = await cli(["env", "list", "--format", "json", "--status", "pending", "--role", "Aya"]);
    expect(JSON.parse(json.stdout).items).toMatchObject([
      { id, count: 2, status: "pending", role: "Aya", adjustment_type: "add_preinstall_step" },
    ]);
    expect((await cli(["env", "list", "--status", "accepted"])).stdout).toBe("no environment proposals\n");
  });

  it("accepts as a human; the role's environment then has the step", async () => {
    const res = await cli(["env", "accept", id, "--as", "Human"]);
    expect(res.stderr).toBe("");
    const change = /change (envc_[0-9a-f]{12})/.exec(res.stdout)![1]!;
    expect(res.stdout).toBe(
      `${id} accepted by Human: Aya add_preinstall_step {"command":"npm ci"}\n  change ${change}  applied  add_preinstall_step (proposal ${id})\n`,
    );
    const show = await cli(["env", "show", "Aya"]);
    expect(show.stdout).toBe(
      `Aya:\n  pre-install (${id}): npm ci\n  changes:\n    ${change}  applied  add_preinstall_step (proposal ${id})\n`,
    );
    const json = JSON.parse((await cli(["env", "show", "Aya", "--format", "json"])).stdout) as {
      preinstall: unknown[];
      network: string;
      changes: unknown[];
    };
    expect(json.preinstall).toEqual([{ proposal_id: id, command: "npm ci" }]);
    expect(json.network).toBe("host");
    expect(json.changes).toEqual([
      expect.objectContaining({
        id: change,
        proposal_id: id,
        status: "applied",
        applies_to: "Aya",
        effect: { tools_dir: null, installed: [] },
      }),
    ]);
    const again = await cli(["env", "reject", id, "--as", "Human"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(`^pmagent: environment proposal ${id} was already accepted by Human at .* \\[proposal_decided\\]\\n$`),
    );
  });

  it.each([
    [
      ["env", "accept", "ID"],
      {},
      2,
      "pmagent: say who decides: pass --as NAME (a human listed in the config's humans) or set PMAGENT_ACTOR [actor_required]\n",
    ],
    [
      ["env", "reject", "ID", "--as", "Aya"],
      {},
      1,
      'pmagent: only a human may reject an environment proposal; "Aya" is not listed in the config\'s humans (Human) [not_human]\n',
    ],
    [
      ["env", "accept", "ID"],
      { PMAGENT_ACTOR: "Sho" },
      1,
      'pmagent: only a human may accept an environment proposal; "Sho" is not listed in the config\'s humans (Human) [not_human]\n',
    ],
    [
      ["env", "accept", "envp_missing", "--as", "Human"],
      {},
      1,
      'pmagent: no environment proposal "envp_missing" in project demo: see `pmagent env list` [proposal_not_found]\n',
    ],
    [
      ["env", "undo", "envc_missing", "--as", "Human"],
      {},
      1,
      'pmagent: no environment change "envc_missing" in project demo: see `pmagent env show ROLE` (a change is made when a proposal is accepted) [change_not_found]\n',
    ],
    [
      ["env", "undo", "ID", "--as", "Aya"],
      {},
      1,
      'pmagent: only a human may undo an environment change; "Aya" is not listed in the config\'s humans (Human) [not_human]\n',
    ],
    [
      ["env", "undo", "ID"],
      {},
      2,
      "pmagent: say who decides: pass --as NAME (a human listed in the config's humans) or set PMAGENT_ACTOR [actor_required]\n",
    ],
    [
      ["env", "show", "Nobody"],
      {},
      2,
      'pmagent: role "Nobody" is not configured in any lane (configured roles: Aya, Sho, Tsugu, Gen, Hana) [unknown_role]\n',
    ],
  ])("%j fails with a message", async (args, env, code, stderr) => {
    const res = await cli(
      args.map((a) => (a === "ID" ? id : a)),
      env,
    );
    expect(res.code).toBe(code);
    expect(res.stderr).toBe(stderr);
  });

  it("records a failed install as failed, exits 1 with its reason, and undoes only what was applied", async () => {
    const store = new SqliteStore(db);
    const ps = new ProposalStore({ store, projectId: "demo", humans: ["Human"] });
    const payload = (details: Record<string, unknown>, exit_code: number) => ({
      observed_failure: { phase: "bootstrap", exit_code, stderr_hint: "not found" },
      suggested_adjustment: { type: "runtime_install", details },
      confidence: 0.8,
      evidence: [],
      scope: "repo_specific",
    });
    // A package file outside the project (where no sandboxed sprite writes) that is not there.
    const missing = join(p.dir, "nope.tgz");
    const bad = (await ps.record("Aya", "run-3", "ev-3", payload({ runtime: "ghost", package: missing }, 127))).proposal
      .id;
    const odd = (await ps.record("Aya", "run-3", "ev-4", payload({ runtime: "ghost", source: "brew" }, 1))).proposal.id;
    await store.close();
    const res = await cli(["env", "accept", bad, "--as", "Human"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(
      new RegExp(
        `^${bad} accepted by Human: Aya runtime_install .*\n  change envc_[0-9a-f]{12}  failed  runtime_install \\(proposal ${bad}\\): npm package file ${missing} does not exist\n$`,
      ),
    );
    expect(res.stderr).toMatch(
      new RegExp(
        `^pmagent: environment proposal ${bad} is accepted but applying it failed, so later runs do not get it \\(change envc_[0-9a-f]{12}\\): npm package file ${missing} does not exist \\[install_failed\\]\n$`,
      ),
    );
    expect((await cli(["env", "show", "Aya"])).stdout).toMatch(
      /^Aya:\n {2}changes:\n {4}envc_\S+ {2}failed {2}runtime_install/,
    );
    const undo = await cli(["env", "undo", bad, "--as", "Human"]);
    expect(undo.code).toBe(1);
    expect(undo.stderr).toMatch(
      new RegExp(
        `^pmagent: environment change envc_[0-9a-f]{12} \\(proposal ${bad}\\) failed and was never applied \\(npm package file ${missing} does not exist\\): nothing to undo \\[change_not_applied\\]\n$`,
      ),
    );
    const refused = await cli(["env", "accept", odd, "--as", "Human"]);
    expect([refused.code, refused.stderr]).toEqual([
      2,
      `pmagent: environment proposal ${odd} (runtime_install) has details.source "brew": use npm, apt (or deb) or path [proposal_details_invalid]\n`,
    ]);
    expect((await cli(["env", "list", "--status", "pending", "--format", "json"])).stdout).toContain(odd);
  });

  it("env show says what accepting each pending proposal runs, where and how, or why it is refused; accepting a refused one fails saying why", async () => {
    const store = new SqliteStore(db);
    // A second apart: the list is newest first, and two proposals seen in one millisecond would fall back to id order.
    let now = Date.now();
    const ps = new ProposalStore({ store, projectId: "demo", humans: ["Human"], clock: () => (now += 1000) });
    const record = async (n: number, details: Record<string, unknown>) =>
      (
        await ps.record("Aya", "run-4", `ev-p${n}`, {
          observed_failure: { phase: "bootstrap", exit_code: n, stderr_hint: "" },
          suggested_adjustment: { type: "runtime_install", details },
          confidence: 0.8,
          evidence: [],
          scope: "repo_specific",
        })
      ).proposal.id;
    const cow = await record(1, { runtime: "cowsay", version: "1.6.0" });
    const bad = await record(2, { runtime: "../../bin/x" });
    await store.close();
    const refusal = `environment proposal ${bad} (runtime_install) cannot be accepted: details.runtime "../../bin/x" is not a bare name (letters, digits and . _ + -, starting with a letter or digit, no "..", at most 128 characters); reject it (\`pmagent env reject ${bad}\`)`;
    const dir = join(p.project.root, ".pmagent", "tools", "Aya", cow);
    const show = await cli(["env", "show", "Aya"]);
    expect(show.stderr).toBe("");
    const lines = show.stdout.split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "Aya: no accepted environment proposals",
      "  pending proposals (what accepting each runs):",
      `    ${bad}  runtime_install: REFUSED: ${refusal}`,
    ]);
    expect(lines[3]).toMatch(
      new RegExp(
        `^ {4}${cow} {2}runtime_install: runs in bubblewrap \\(\\S*bwrap: what sprites cannot see hidden, only the change's directory writable, the host's network\\) with a scrubbed environment \\(no token, a fresh HOME\\), no package scripts:$`,
      ),
    );
    expect(lines.slice(4, 9)).toEqual([
      `      link the first of cowsay1.6.0, cowsay-1.6.0, cowsay on the PATH whose \`--version\` reports 1.6.0 (each found one's --version runs) into ${dir}/bin`,
      "      if none is found: apt-cache show --no-all-versions cowsay",
      "      if apt knows it: apt-get download -q cowsay",
      `      if apt knows it: dpkg-deb -x '${dir}/.download-*/cowsay_*.deb' ${dir}`,
      `      else: npm install --global --prefix ${dir} --ignore-scripts --no-audit --no-fund --no-update-notifier cowsay@1.6.0`,
    ]);
    expect(lines.slice(9)).toEqual([
      `    ${id}  add_preinstall_step: runs in the run's sandbox, with the sprite's environment, in its workspace:`,
      "      before each run of Aya: sh -c 'npm ci'",
      "",
    ]);
    const json = JSON.parse((await cli(["env", "show", "Aya", "--format", "json"])).stdout) as {
      pending: Array<{ proposal_id: string; refused: string | null; steps: Array<{ argv: string[] | null }> }>;
    };
    expect(json.pending.find((x) => x.proposal_id === bad)).toEqual({
      proposal_id: bad,
      adjustment_type: "runtime_install",
      refused: refusal,
      isolation: null,
      steps: [],
    });
    expect(json.pending.find((x) => x.proposal_id === cow)?.steps.at(-1)?.argv).toEqual([
      "npm",
      "install",
      "--global",
      "--prefix",
      dir,
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--no-update-notifier",
      "cowsay@1.6.0",
    ]);
    const refused = await cli(["env", "accept", bad, "--as", "Human"]);
    expect([refused.code, refused.stdout, refused.stderr]).toEqual([1, "", `pmagent: ${refusal} [proposal_refused]\n`]);
    expect((await cli(["env", "reject", bad, "--as", "Human"])).code).toBe(0);
  });

  it("undoes an applied change once", async () => {
    await cli(["env", "accept", id, "--as", "Human"]);
    const undo = await cli(["env", "undo", id, "--as", "Human"]);
    expect(undo.stdout).toMatch(
      new RegExp(`^envc_[0-9a-f]{12}  undone  add_preinstall_step \\(proposal ${id}\\) by Human at \\d{4}-.*\n$`),
    );
    expect((await cli(["env", "show", "Aya"])).stdout).toMatch(/^Aya:\n {2}changes:\n {4}envc_\S+ {2}undone/);
    const twice = await cli(["env", "undo", id, "--as", "Human"]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(
      new RegExp(
        `^pmagent: environment change envc_[0-9a-f]{12} \\(proposal ${id}\\) was already undone by Human at \\d{4}-\\S+ \\[change_undone\\]\n$`,
      ),
    );
  });

  it("refuses an unknown status", async () => {
    const res = await cli(["env", "list", "--status", "maybe"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      "error: option '--status <status>' argument 'maybe' is invalid. Allowed choices are pending, accepted, rejected.",
    );
  });

  it("pmagent prs lists the local forge's pull requests", async () => {
    expect((await cli(["prs"])).stdout).toBe("no pull requests\n");
    const store = new SqliteStore(db);
    const forge = new LocalForge({ store, projectId: "demo", root: p.project.root, bareRepo: ".pmagent/forge.git" });
    const ws = makeWorkspace(p.project.root, "ws", "sprite/docs");
    await forge.openPullRequest({
      title: "Update docs",
      body: "",
      base: "main",
      head: "sprite/docs",
      workspace: ws.path,
    });
    await store.close();
    expect((await cli(["prs"])).stdout).toBe(`#1  open  sprite/docs → main  ${ws.sha.slice(0, 12)}  Update docs\n`);
    const json = JSON.parse((await cli(["prs", "--format", "json", "--state", "open"])).stdout) as {
      items: unknown[];
      next: null;
    };
    expect(json.next).toBeNull();
    expect(json.items).toEqual([
      expect.objectContaining({
        number: 1,
        head: "sprite/docs",
        base: "main",
        head_sha: ws.sha,
        state: "open",
        url: "pmagent-forge://demo/pulls/1",
      }),
    ]);
    expect((await cli(["prs", "--state", "closed"])).stdout).toBe("no pull requests\n");
    const bad = await cli(["prs", "--state", "weird"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'weird' is invalid. Allowed choices are open, closed, merged, all.");
  });
});
