import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ProposalStore,
  proposalFingerprint,
  roleEnvironment,
  type ProposalPayload,
} from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";

const kinds = await availableStoreKinds();

function proposal(
  type: string,
  details: Record<string, unknown>,
  failure: Partial<ProposalPayload["observed_failure"]> = {},
): ProposalPayload {
  return {
    observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "bash: node: command not found", ...failure },
    suggested_adjustment: { type, details },
    confidence: 0.85,
    evidence: ["package.json present"],
    scope: "repo_specific",
  };
}

describe("proposal fingerprint", () => {
  it("depends on phase, exit code, type and details only", () => {
    const a = proposal("runtime_install", { runtime: "node", version: "20" });
    expect(proposalFingerprint(a)).toBe(
      proposalFingerprint({
        ...a,
        confidence: 0.1,
        evidence: [],
        observed_failure: { ...a.observed_failure, stderr_hint: "other" },
      }),
    );
    expect(proposalFingerprint(a)).toBe(
      proposalFingerprint(proposal("runtime_install", { version: "20", runtime: "node" })),
    );
    expect(proposalFingerprint(a)).not.toBe(
      proposalFingerprint(proposal("runtime_install", { runtime: "node", version: "22" })),
    );
    expect(proposalFingerprint(a)).not.toBe(
      proposalFingerprint(proposal("runtime_install", { runtime: "node", version: "20" }, { exit_code: 1 })),
    );
    expect(proposalFingerprint(a)).not.toBe(
      proposalFingerprint(proposal("runtime_install", { runtime: "node", version: "20" }, { phase: "test" })),
    );
  });
});

describe.each(kinds)("environment proposals ($name)", (kind) => {
  let t: TestStore;
  let ps: ProposalStore;
  beforeEach(async () => {
    t = await kind.open();
    ps = new ProposalStore({ store: t.store, projectId: "demo", humans: ["Human", "Mika"] });
  });
  afterEach(async () => t.cleanup());

  it("stores each fingerprint once per role and counts repeats", async () => {
    const first = await ps.record(
      "Aya",
      "run-1",
      "ev-1",
      proposal("runtime_install", { runtime: "node", version: "20" }),
    );
    const again = await ps.record("Aya", "run-2", "ev-2", {
      ...proposal("runtime_install", { runtime: "node", version: "20" }),
      confidence: 0.9,
    });
    const otherRole = await ps.record(
      "Sho",
      "run-3",
      "ev-3",
      proposal("runtime_install", { runtime: "node", version: "20" }),
    );
    expect(first.first).toBe(true);
    expect(again.first).toBe(false);
    expect(again.proposal).toMatchObject({
      id: first.proposal.id,
      count: 2,
      status: "pending",
      first_run_id: "run-1",
      last_run_id: "run-2",
      confidence: 0.9,
      role: "Aya",
    });
    expect(otherRole.proposal.id).not.toBe(first.proposal.id);
    expect((await ps.list()).map((p) => [p.role, p.count])).toEqual(
      expect.arrayContaining([
        ["Aya", 2],
        ["Sho", 1],
      ]),
    );
    expect(await ps.list({ role: "Sho" })).toHaveLength(1);
    expect(await ps.list({ status: "accepted" })).toEqual([]);
  });

  it("counts an event handed over again (after a crash) once", async () => {
    const a = await ps.record("Aya", "run-1", "ev-same", proposal("runtime_install", { runtime: "node" }));
    const b = await ps.record("Aya", "run-1", "ev-same", proposal("runtime_install", { runtime: "node" }));
    expect([a.counted, b.counted, b.first, b.proposal.count]).toEqual([true, false, false, 1]);
    const c = await ps.record("Aya", "run-2", "ev-same", proposal("runtime_install", { runtime: "node" }));
    expect(c.proposal.count).toBe(2);
  });

  it("lets a human accept or reject, once", async () => {
    const { proposal: p } = await ps.record("Aya", "run-1", "ev-4", proposal("enable_network_access", {}));
    const accepted = await ps.accept(p.id, "Mika");
    expect(accepted).toMatchObject({ status: "accepted", decided_by: "Mika" });
    expect(accepted.decided_at).toMatch(/^\d{4}-/);
    await expect(ps.reject(p.id, "Human")).rejects.toThrow(
      `environment proposal ${p.id} was already accepted by Mika at ${accepted.decided_at}`,
    );
    // A repeat of an accepted proposal keeps counting without reopening it.
    expect((await ps.record("Aya", "run-9", "ev-5", proposal("enable_network_access", {}))).proposal).toMatchObject({
      status: "accepted",
      count: 2,
    });
  });

  it("refuses deciders who are not human, unknown ids and unusable details", async () => {
    const { proposal: p } = await ps.record(
      "Aya",
      "run-1",
      "ev-6",
      proposal("add_preinstall_step", { script: "npm ci" }),
    );
    await expect(ps.accept(p.id, "Aya")).rejects.toThrow(
      'only a human may accept an environment proposal; "Aya" is not listed in the config\'s humans (Human, Mika)',
    );
    await expect(ps.reject("envp_nope", "Human")).rejects.toThrow(
      'no environment proposal "envp_nope" in project demo: see `pmagent env list`',
    );
    await expect(ps.accept(p.id, "Human")).rejects.toThrow(
      `environment proposal ${p.id} (add_preinstall_step) needs details.command: a command string or a non-empty argv array`,
    );
    expect((await ps.reject(p.id, "Human")).status).toBe("rejected");
  });

  // A sprite writes the proposal and accepting it runs installers outside its sandbox: every name is a bare name.
  const NAME_RULE = '(letters, digits and . _ + -, starting with a letter or digit, no "..", at most 128 characters)';
  const PACKAGE_RULE =
    '(letters, digits and . _ + -, starting with a letter or digit, no "..", no "/"), optionally with @VERSION or =VERSION';
  const NOT_A_FILE = "is neither a bare package name nor the absolute, normal path of a .tgz, .tar.gz or .deb file";
  it.each([
    ["runtime_install", { runtime: "../../bin/x" }, `details.runtime "../../bin/x" is not a bare name ${NAME_RULE}`],
    [
      "runtime_install",
      { runtime: "/usr/bin/node" },
      `details.runtime "/usr/bin/node" is not a bare name ${NAME_RULE}`,
    ],
    ["runtime_version_adjust", { name: "..", version: "20" }, `details.name ".." is not a bare name ${NAME_RULE}`],
    ["runtime_install", { runtime: "-rf" }, `details.runtime "-rf" is not a bare name ${NAME_RULE}`],
    ["runtime_install", { runtime: "node\nrm" }, `details.runtime "node\\nrm" is not a bare name ${NAME_RULE}`],
    [
      "runtime_install",
      { runtime: "node", version: "^20" },
      'details.version "^20" is not a version (letters, digits and . _ + ~ -, starting with a letter or digit, no "..", no ranges)',
    ],
    [
      "runtime_install",
      { runtime: "node", version: "../20" },
      'details.version "../20" is not a version (letters, digits and . _ + ~ -, starting with a letter or digit, no "..", no ranges)',
    ],
    [
      "runtime_install",
      { runtime: "x", package: "--registry=http://evil.invalid" },
      `details.package "--registry=http://evil.invalid" ${NOT_A_FILE}`,
    ],
    [
      "runtime_install",
      { runtime: "x", package: "-g" },
      `details.package "-g" is not a bare package name ${PACKAGE_RULE}`,
    ],
    ["runtime_install", { runtime: "x", package: "x@../y" }, `details.package "x@../y" ${NOT_A_FILE}`],
    [
      "runtime_install",
      { runtime: "x", package: "x@1..2" },
      `details.package "x@1..2" is not a bare package name ${PACKAGE_RULE}`,
    ],
    ["runtime_install", { runtime: "x", package: "./evil.tgz" }, `details.package "./evil.tgz" ${NOT_A_FILE}`],
    [
      "runtime_install",
      { runtime: "x", package: "/ws/../evil.tgz" },
      `details.package "/ws/../evil.tgz" ${NOT_A_FILE}`,
    ],
    ["runtime_install", { runtime: "x", package: "/ws/evil.sh" }, `details.package "/ws/evil.sh" ${NOT_A_FILE}`],
    ["add_system_package", { packages: ["jq", "../../x.deb"] }, `details.packages[1] "../../x.deb" ${NOT_A_FILE}`],
    ["add_system_package", { packages: [{ name: "jq" }] }, "details.packages[0] is not a string"],
    [
      "dependency_manager_switch",
      { to: "../../usr/bin/yarn" },
      `details.to "../../usr/bin/yarn" is not a bare name ${NAME_RULE}`,
    ],
  ])("refuses %s %j, saying why", async (type, details, problem) => {
    const { proposal: p } = await ps.record("Aya", "run-1", `ev-${JSON.stringify(details)}`, proposal(type, details));
    const refused = ps.accept(p.id, "Human");
    await expect(refused).rejects.toMatchObject({ code: "proposal_refused", kind: "refused" });
    await expect(refused).rejects.toThrow(
      `environment proposal ${p.id} (${type}) cannot be accepted: ${problem}; reject it (\`pmagent env reject ${p.id}\`)`,
    );
    expect((await ps.get(p.id)).status).toBe("pending");
  });

  it("accepts bare names, versions and package specs", async () => {
    let n = 0;
    const accept = async (type: string, details: Record<string, unknown>) =>
      ps.accept(
        (await ps.record("Aya", "r", `ev-ok${++n}`, proposal(type, details, { exit_code: n }))).proposal.id,
        "Human",
      );
    for (const [type, details] of [
      ["runtime_install", { runtime: "python3.12", version: "3.12.1~rc1" }],
      ["runtime_install", { runtime: "g++", package: "g++-12" }],
      ["runtime_install", { runtime: "node", package: "node@20.11.1", version: 20 }],
      ["add_system_package", { packages: ["libssl3=3.0.11-1", "ripgrep"] }],
      ["dependency_manager_switch", { to: "pnpm", package: "pnpm@9.1.0" }],
      ["runtime_install", { runtime: "tool", package: "/opt/pkgs/tool-1.0.0.tgz" }],
    ] as const) {
      expect((await accept(type, details)).status).toBe("accepted");
    }
  });

  it("turns accepted proposals into the role's environment", async () => {
    let n = 0;
    const accept = async (type: string, details: Record<string, unknown>, role = "Aya") =>
      ps.accept(
        (await ps.record(role, "r", `ev-a${++n}`, proposal(type, details, { exit_code: n }))).proposal.id,
        "Human",
      );
    await accept("add_preinstall_step", { command: "echo ready > preinstalled.txt" });
    await accept("add_preinstall_step", { command: ["git", "--version", "it's here"] });
    await accept("runtime_install", { runtime: "node", version: "20" });
    await accept("runtime_version_adjust", { runtime: "python", version: 3.12 });
    await accept("dependency_manager_switch", { from: "npm", to: "pnpm" });
    await accept("adjust_smoke_command", { command: "npm test -- --run" });
    await accept("add_system_package", { packages: ["jq", "ripgrep"] });
    await accept("enable_network_access", { hosts: ["registry.npmjs.org"] });
    await accept("escalate_to_human", { reason: "licence" });
    await accept("runtime_install", { runtime: "go" }, "Sho");
    await ps.record("Aya", "r", "ev-8", proposal("add_system_package", { package: "curl" })); // pending: not applied
    const env = await roleEnvironment(ps, "Aya");
    expect(env.preinstall.map((s) => s.command)).toEqual([
      "echo ready > preinstalled.txt",
      "git --version 'it'\\''s here'",
    ]);
    expect(env.env).toMatchObject({
      PMAGENT_RUNTIME_NODE: "20",
      PMAGENT_RUNTIME_PYTHON: "3.12",
      PMAGENT_DEPENDENCY_MANAGER: "pnpm",
      PMAGENT_SMOKE_COMMAND: "npm test -- --run",
      PMAGENT_SYSTEM_PACKAGES: "jq ripgrep",
      PMAGENT_NETWORK_ACCESS: "enabled",
      PMAGENT_NETWORK_HOSTS: "registry.npmjs.org",
    });
    expect(JSON.parse(env.env.PMAGENT_ENVIRONMENT!)).toHaveLength(9);
    expect(env.adjustments.map((a) => a.type)).toContain("escalate_to_human");
    expect((await roleEnvironment(ps, "Sho")).env.PMAGENT_RUNTIME_GO).toBe("latest");
    expect(await roleEnvironment(ps, "Gen")).toEqual({
      role: "Gen",
      preinstall: [],
      env: {},
      adjustments: [],
      path: [],
    });
  });
});
