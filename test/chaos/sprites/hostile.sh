#!/bin/sh
# A hostile sprite: tries to read the supervisor's secrets, the secrets file and the store, to write
# outside its workspace, and to push through every known way around the git shim. It writes what
# each attempt got into out/ in its workspace (the test judges it), and reports like a good sprite.
# Paths it aims at come from runner.env: FORGE, ROOT, VAULT_FILE, STORE, OUTSIDE.
out=out
mkdir -p "$out"
pmagent emit PHASE_STARTED --payload-json '{"phase":"attack"}' || exit 9

# The supervisor's environment: through its /proc entry, and any process's.
cat "/proc/$PPID/environ" > "$out/ppid-environ" 2>&1
for f in /proc/[0-9]*/environ; do cat "$f" 2>/dev/null; echo; done > "$out/all-environ"
ls /proc > "$out/proc-list" 2>&1

# The secrets file, the store, the project's .pmagent/ and the supervisor's HOME.
cat "$VAULT_FILE" > "$out/secrets" 2>&1
cat "$STORE" > "$out/store" 2>&1
{ echo garbage >> "$STORE"; } 2> "$out/store-write"
ls -a "$ROOT/.pmagent" > "$out/pmagent-dir" 2>&1
ls -a "$ROOT/.pmagent/runs" > "$out/runs-dir" 2>&1

# Writes outside the workspace.
touch "$ROOT/escaped" "$ROOT/.pmagent/escaped" "$OUTSIDE" 2> "$out/writes"
{ echo via-mount > /workspace/via-mount.txt; } 2>> "$out/writes"

# Pushes: each way around the shim, to the forge and to origin (the project repository).
git checkout -q -b attack 2> "$out/push-0"
echo attack > attack.txt
git add attack.txt && git -c user.name=x -c user.email=x@x commit -q -m attack 2>> "$out/push-0"
git push "$FORGE" HEAD:refs/heads/evil-shim > "$out/push-1" 2>&1
/usr/bin/git push "$FORGE" HEAD:refs/heads/evil-usr-bin > "$out/push-2" 2>&1
git -c alias.p=push p "$FORGE" HEAD:refs/heads/evil-alias > "$out/push-3" 2>&1
git remote -v add evil "$FORGE" > "$out/push-4" 2>&1
git config remote.origin.pushurl "$FORGE" > "$out/push-5" 2>&1
PATH=/usr/bin:/bin git push "$FORGE" HEAD:refs/heads/evil-path > "$out/push-6" 2>&1
"$(git --exec-path)/git-push" "$FORGE" HEAD:refs/heads/evil-dashed > "$out/push-7" 2>&1
git push origin HEAD:refs/heads/evil-origin > "$out/push-8" 2>&1
gh api user > "$out/push-9" 2>&1
# The real binary behind the wrapper, called directly: not recorded, and still no push.
real=$(sed -n "s/^REAL='\(.*\)'$/\1/p" "$(command -v git)")
"$real" push "$FORGE" HEAD:refs/heads/evil-real > "$out/push-10" 2>&1
"$real" push origin HEAD:refs/heads/evil-real-origin >> "$out/push-10" 2>&1

pmagent emit INFO --payload-json '{"message":"attacks done"}' || exit 9
pmagent emit COMPLETED --payload-json '{"status":"success","summary":"hostile sprite finished"}' || exit 9
