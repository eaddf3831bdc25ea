#!/bin/sh
# bench/machines' short sprite: one INFO and COMPLETED, written by the shell (no runtime to start),
# after a short piece of "work" (BENCH_WORK_S seconds, default 0.2).
set -e
ts=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
head="{\"protocol_version\":\"v1\",\"sprite_id\":\"$LATTICE_SPRITE_ID\",\"work_item_id\":\"$LATTICE_WORK_ITEM_ID\",\"timestamp\":\"$ts\""
mkdir -p "$LATTICE_WORKSPACE/.lattice"
printf '%s,"event_type":"INFO","payload":{"message":"working"}}\n' "$head" >> "$LATTICE_OUTBOX"
sleep "${BENCH_WORK_S:-0.2}"
printf '%s,"event_type":"COMPLETED","payload":{"status":"success"}}\n' "$head" >> "$LATTICE_OUTBOX"
