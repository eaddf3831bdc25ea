import { isPmagentError, plural } from "../core/index.js";
import { findLane, type Config, type LaneConfig } from "../config/light/index.js";
import {
  collectGit,
  absentStateDoc,
  collectStateDoc,
  cycleMentions,
  stateDocPath,
  githubWebUrl,
  repoCycles,
  repoProjects,
  type BoardEntryEvidence,
  type EvidenceWindow,
  type GithubEvidence,
  type KaiEvidence,
  type RunEvidence,
} from "./evidence/index.js";
import {
  KAI_VERSION,
  answerZone,
  buildLaneStatus,
  daysBefore,
  errorSummary,
  laneCycles,
  laneStatusSummary,
  ownCycleName,
  whatChangedSummary,
  whatChangedReport,
  withUrls,
  type KaiRequest,
  type KaiResponse,
  type Zone,
} from "./reports/index.js";
import { checkRequest, checkRequestText } from "./request.js";

/** A source of evidence other than the repository; each returns only what existed at `until`. */
export interface KaiSources {
  /** The repository to read git history and the STATE document from. */
  repo: string;
  /** The blackboard as it stood at the window's end; given the lane and the question so it can read only what the answer needs. */
  board?: (window: EvidenceWindow, lane: LaneConfig, type: KaiRequest["type"]) => Promise<BoardEntryEvidence[]>;
  /**
   * Runs of the lane's roles as they stood at the window's end; given the ids of the lane's
   * blackboard entries read (so each step can show its latest run, even one older than the window).
   */
  runs?: (
    window: EvidenceWindow,
    lane: LaneConfig,
    entryIds: readonly string[],
    type: KaiRequest["type"],
  ) => Promise<RunEvidence[]>;
  github?: (window: EvidenceWindow) => Promise<GithubEvidence>;
  /** Why a source is absent (e.g. no GitHub token), reported in `notes`. */
  notes?: string[];
  /**
   * The blackboard and runs of another project living in the same repository (its entries and runs
   * are kept under its own project id); absent, such a project is answered from the repository alone.
   */
  project?: (projectId: string) => Promise<Pick<KaiSources, "board" | "runs">>;
}

export interface KaiOptions {
  config: Config;
  sources: KaiSources;
  clock?: () => number;
}

function errorResponse(request_id: string | null, notes: string[], now: Date): KaiResponse {
  return {
    version: "kai_response_v1",
    request_id,
    status: "error",
    meta: { generated_at: now.toISOString(), kai_version: KAI_VERSION },
    payload: null,
    summary_md: errorSummary(notes),
    notes,
  };
}

async function optional<T>(
  name: string,
  source: ((w: EvidenceWindow, lane: LaneConfig) => Promise<T>) | undefined,
  window: EvidenceWindow,
  lane: LaneConfig,
  notes: string[],
): Promise<T | null> {
  if (!source) return null;
  try {
    return await source(window, lane);
  } catch (err) {
    // An optional source failing leaves its part of the answer out; the caveat says so.
    if (!isPmagentError(err)) throw err;
    notes.push(`${name} was not read: ${err.message}`);
    return null;
  }
}

/** Gather the evidence a request needs, every source cut at the window's end. */
export async function collectEvidence(
  request: KaiRequest,
  config: Config,
  sources: KaiSources,
  window: EvidenceWindow,
): Promise<KaiEvidence> {
  const lane = findLane(config, request.lane.layer, request.lane.name)!;
  const notes = [...(sources.notes ?? [])];
  // The git reads start first, the chain of the STATE document's (which document, then its text
  // and history) ahead of the rest: each git process runs beside what follows (the board and the
  // runs are read from the store on this thread), and starting one blocks this thread for a while.
  const pathRead = stateDocPath(sources.repo, config.project_id, lane, window.until);
  // No commit at or before the cutoff (a fresh `git init`, an as_of before the first commit): the
  // document's text and history and the commits naming cycles would read empty, so none is read.
  const foundRead = pathRead.then(async ({ path, found_by, no_commits }) => ({
    ...(no_commits ? absentStateDoc(path) : await collectStateDoc(sources.repo, path, window.until)),
    found_by,
  }));
  // A window's story from a shallow clone may miss commits: what_changed says so (lane_status reads
  // the window only for a repository cycle's later roles).
  const commitsRead =
    request.type === "what_changed" ? collectGit(sources.repo, window, { shallow: true }) : Promise.resolve(null);
  const webUrlRead = githubWebUrl(sources.repo, config);
  const boardSource = sources.board;
  const boardRead = optional(
    "the blackboard",
    boardSource && ((w, l) => boardSource(w, l, request.type)),
    window,
    lane,
    notes,
  );
  // Both answers name the board's cycles as the project's commits do (the same names in each).
  // The commits that name cycles are read when a cycle gives itself no name, or when the board has
  // none (the repository's own cycles are dated by them): a walk of the whole history with
  // --grep, the slowest read of a large repository, which a board of named cycles never uses.
  const boardCycles = boardRead.then((board) => laneCycles(board ?? [], lane, config.humans, []));
  const mentionsRead = Promise.all([boardCycles, pathRead]).then(([cycles, { no_commits }]) =>
    no_commits || (cycles.length > 0 && cycles.every((c) => ownCycleName(c.root, c.entries) !== null))
      ? []
      : cycleMentions(sources.repo, window.until),
  );
  const runSource = sources.runs;
  const roles = new Set(lane.roles.map((r) => r.name));
  // Runs follow the board: the lane's entries name the runs its steps show.
  const runsRead = runSource
    ? boardRead.then((b) =>
        optional(
          "runs",
          (w, l) =>
            runSource(
              w,
              l,
              (b ?? []).filter((e) => roles.has(e.to)).map((e) => e.id),
              request.type,
            ),
          window,
          lane,
          notes,
        ),
      )
    : Promise.resolve(null);
  // Cycles the repository records (applies merged to STATE): what lane_status shows where the board
  // has none. Read only then: it walks the STATE document's whole history, started as soon as the
  // document's path is known, beside the reading of its text, rather than after every other source.
  const repoCyclesRead =
    request.type === "lane_status"
      ? Promise.all([pathRead, boardCycles]).then(([{ path, no_commits }, cycles]) =>
          cycles.length > 0
            ? null
            : no_commits
              ? []
              : repoCycles(sources.repo, lane, { path, read: foundRead }, window.until, mentionsRead),
        )
      : Promise.resolve(null);
  // what_changed compares the STATE document's sections with how they stood at the window's start.
  const beforeRead =
    request.type === "what_changed"
      ? pathRead.then(({ path, no_commits }) =>
          no_commits ? absentStateDoc(path) : collectStateDoc(sources.repo, path, window.since),
        )
      : Promise.resolve(null);
  const [git, found, board, runs, github, web_url, cycle_mentions, repo_cycles, state_doc_before] = await Promise.all([
    commitsRead,
    foundRead,
    boardRead,
    runsRead,
    optional("GitHub", sources.github, window, lane, notes),
    webUrlRead,
    mentionsRead,
    repoCyclesRead,
    beforeRead,
  ]);
  const { found_by, ...state_doc } = found;
  notes.unshift(`STATE document read: ${state_doc.path}, ${found_by}`);
  // A cycle known from the repository: its later roles' progress is read from the window's commits.
  const gitRead = git ?? (repo_cycles && repo_cycles.length > 0 ? await collectGit(sources.repo, window) : null);
  if (!sources.board) notes.push("the blackboard was not read (no blackboard source)");
  if (!sources.runs) notes.push("runs were not read (no run records available)");
  if (!github && !runs)
    notes.push(
      "Workflow runs were not consulted (no GitHub token and no run records): by_category.workflows is empty for that reason, not because nothing ran",
    );
  else if (!github)
    notes.push(
      "GitHub Actions runs were not consulted (no GitHub token): by_category.workflows lists pmagent runs only",
    );
  return {
    git: gitRead,
    state_doc,
    state_doc_before,
    board,
    runs,
    github,
    repo_cycles,
    web_url,
    cycle_mentions,
    notes,
  };
}

function evidenceNotes(request: KaiRequest, ev: KaiEvidence, window: EvidenceWindow, zone: Zone): string[] {
  const notes: string[] = [];
  if (ev.git)
    notes.push(
      `Evidence: ${plural(ev.git.commits.length, "commit")} of ${ev.git.repo} committed in (${ev.git.since}, ${ev.git.until}]`,
    );
  if (ev.git?.shallow_cut_at)
    notes.push(
      `${ev.git.repo} is a shallow clone whose history was cut at a commit of ${ev.git.shallow_cut_at}, after the window's start: commits behind the cut are not here and some may belong in this window; \`git fetch --unshallow\` fetches them`,
    );
  if (ev.state_doc)
    notes.push(
      `Evidence: ${ev.state_doc.path}${ev.state_doc.revision ? ` at ${ev.state_doc.revision.slice(0, 12)}` : ""}${ev.state_doc.exists ? "" : " (missing)"}`,
    );
  if (ev.board) {
    const issues = [...new Set(ev.board.flatMap((e) => (e.source_issue === null ? [] : [e.source_issue])))].sort(
      (a, b) => a - b,
    );
    notes.push(
      `Evidence: ${plural(ev.board.length, "blackboard entry")} up to ${window.until.toISOString()}${issues.length > 0 ? `; board issue${issues.length > 1 ? "s" : ""} ${issues.map((i) => `#${i}`).join(", ")}` : ""}`,
    );
  }
  if (ev.runs) notes.push(`Evidence: ${plural(ev.runs.length, "run")}`);
  if (ev.github)
    notes.push(
      `Evidence: GitHub ${ev.github.repo}: ${plural(ev.github.pulls.length, "pull request")}, ${plural(ev.github.issues.length, "issue")}, ${plural(ev.github.workflow_runs.length, "workflow run")}`,
    );
  if (request.params.as_of !== undefined)
    notes.push(`Answered as of ${request.params.as_of}: later evidence is ignored`);
  if (request.type === "what_changed")
    notes.push(`Time window: (${window.since.toISOString()}, ${window.until.toISOString()}], dates in ${zone.name}`);
  return [...notes, ...ev.notes];
}

/**
 * The config and sources a request about another project of the repository is answered from: the
 * same lanes and people, its own id (so its STATE document is `STATE/<id>/…`: a lane's state_file
 * naming the configured project names this one instead), its own blackboard and runs.
 */
async function forProject(projectId: string, options: KaiOptions): Promise<KaiOptions> {
  const { config, sources } = options;
  if (projectId === config.project_id) return options;
  const lanes = config.lanes.map((l) => ({
    ...l,
    state_file: l.state_file
      .split("/")
      .map((seg) => (seg === config.project_id ? projectId : seg))
      .join("/"),
  }));
  const own = sources.project ? await sources.project(projectId) : {};
  const { board: _board, runs: _runs, project: _project, ...shared } = sources;
  return {
    ...options,
    config: { ...config, project_id: projectId, lanes },
    sources: {
      ...shared,
      ...own,
      notes: [
        ...(sources.notes ?? []),
        `Answered for ${projectId}, a project living in ${config.project_id}'s repository`,
      ],
    },
  };
}

/** Answer a checked request. Problems with the repository or store are thrown, not answered. */
export async function answerRequest(request: KaiRequest, given: KaiOptions): Promise<KaiResponse> {
  const options = await forProject(request.project_id, given);
  const now = new Date((options.clock ?? Date.now)());
  const until = request.params.as_of !== undefined ? new Date(request.params.as_of) : now;
  // Days are counted on the calendar of the answer's zone, so a window keeps its wall-clock bounds across DST.
  const zone = answerZone(options.config.timezone, request.params.as_of);
  const window = { since: daysBefore(until, request.params.time_window_days, zone), until };
  const lane = findLane(options.config, request.lane.layer, request.lane.name)!;
  const ev = await collectEvidence(request, options.config, options.sources, window);
  const base = {
    version: "kai_response_v1",
    request_id: request.request_id,
    status: "ok",
    meta: { generated_at: now.toISOString(), kai_version: KAI_VERSION },
  } as const;
  const notes = evidenceNotes(request, ev, window, zone);
  // Evidence GitHub shows links to its page when the repository's GitHub address is known.
  const web_url = ev.web_url;
  const link = <T>(data: T): T =>
    web_url
      ? withUrls(data, {
          web_url,
          revision: ev.git?.commits[0]?.sha ?? null,
          file_revisions: ev.state_doc ? { [ev.state_doc.path]: ev.state_doc.revision } : {},
        })
      : data;
  if (request.type === "lane_status") {
    const data = link(
      buildLaneStatus(
        {
          project_id: options.config.project_id,
          lane,
          humans: options.config.humans,
          as_of: until,
          prices: options.config.prices,
          zone,
        },
        ev,
      ),
    );
    if (data.cycle.latest_cycle_id === null)
      notes.push(
        `No cycle of ${lane.layer}/${lane.name} was found up to ${until.toISOString()} on the blackboard, in git or in the STATE document: cycle.latest_cycle_id and cycle.status are null`,
      );
    return { ...base, payload: { kind: "lane_status_v1", data }, summary_md: laneStatusSummary(data), notes };
  }
  const { buildWhatChanged } = await whatChangedReport();
  const data = link(
    buildWhatChanged(
      {
        project_id: options.config.project_id,
        lane,
        lanes: options.config.lanes,
        humans: options.config.humans,
        since: window.since,
        until,
        max_highlights: request.params.max_highlights,
        zone,
      },
      ev,
    ),
  );
  return {
    ...base,
    payload: { kind: "what_changed_v1", data },
    summary_md: whatChangedSummary(data, { github: ev.github !== null, runs: ev.runs !== null }),
    notes,
  };
}

/** Answer a request given as a value: invalid requests get a `status: "error"` response. */
export async function answer(value: unknown, options: KaiOptions): Promise<KaiResponse> {
  const now = new Date((options.clock ?? Date.now)());
  const check = await checkRequest(value, options.config, now, () => repoProjects(options.sources.repo));
  return check.ok ? answerRequest(check.request, options) : errorResponse(check.request_id, check.notes, now);
}

/** Answer a request given as JSON text (a file, stdin, an HTTP body). */
export async function answerText(text: string, options: KaiOptions): Promise<KaiResponse> {
  const now = new Date((options.clock ?? Date.now)());
  const check = await checkRequestText(text, options.config, now, () => repoProjects(options.sources.repo));
  return check.ok ? answerRequest(check.request, options) : errorResponse(check.request_id, check.notes, now);
}
