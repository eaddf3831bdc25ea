/**
 * What the lane's runs spent: their reported tokens and cost (by the config's prices) in total and
 * per role, cycle and day, for lane_status. The runs are the ones Kai read for the lane (see
 * runs.ts); their usage is as stored now (usage rows keep no time, so an `as_of` answer counts
 * a run's later reports too).
 */
import { cycleRootId, type LaneConfig } from "../../config/light/index.js";
import { addTokens, costOf, noTokens, type ModelUsage, type PriceTable } from "../../lattice/runs/index.js";
import type { RunEvidence } from "../evidence/index.js";
import type { LaneUsage, LaneUsageGroup } from "./schema.js";
import { localDate, type Zone } from "./zone.js";

function group(key: string, runs: RunEvidence[], prices: PriceTable): LaneUsageGroup {
  const models: ModelUsage[] = runs.flatMap((r) => r.usage ?? []);
  const tokens = noTokens();
  for (const m of models) addTokens(tokens, m);
  return { key, runs: runs.filter((r) => (r.usage ?? []).length > 0).length, ...tokens, ...costOf(models, prices) };
}

function groupsBy(runs: RunEvidence[], key: (r: RunEvidence) => string, prices: PriceTable): LaneUsageGroup[] {
  const by = new Map<string, RunEvidence[]>();
  for (const r of runs) {
    if ((r.usage ?? []).length === 0) continue;
    const k = key(r);
    by.set(k, [...(by.get(k) ?? []), r]);
  }
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, rs]) => group(k, rs, prices));
}

/** `zone`: the zone days are counted in (the answer's). */
export function laneUsage(runs: RunEvidence[], lane: LaneConfig, prices: PriceTable, zone: Zone): LaneUsage {
  const { key: _key, ...total } = group("total", runs, prices);
  return {
    total,
    by_role: groupsBy(runs, (r) => r.role, prices),
    by_cycle: groupsBy(runs, (r) => (r.entry_id ? cycleRootId(lane, r.entry_id) : "(no entry)"), prices),
    by_day: groupsBy(runs, (r) => localDate(new Date(r.started_at), zone), prices),
  };
}
