# MIG layouts changed at runtime (`nvmirage mig`), as an admin changes them
# with nvidia-smi mig -cgi/-dgi: the capability files, the nvidia-caps nodes
# and NVML (NVIDIA's nvidia-smi mig -lgi/-lgip, -L) follow; bad requests and
# non-root ones change nothing; readers never see half an instance; the
# layout of the profile made again gives the tree back byte for byte.
# Sourced by run.sh (check.sh, agent.sh, $smi_bin, $work, in_t, tree_sum).

echo "== MIG at runtime (a100-mig: GPU 0 as 3g.20gb, 2g.10gb and two 1g.5gb)"
mig() { "$nvm" mig --root "$ROOT" "$@" 2>&1; }
nsmi() { in_t env LD_LIBRARY_PATH="$(pwd)/$out" "$smi_bin" "$@"; }
gis() { in_t sh -c 'cd /proc/driver/nvidia/capabilities/gpu0/mig && ls -d gi* | sort -V | tr "\n" " "'; }
caps() { in_t sh -c 'ls /dev/nvidia-caps | sort -V | tr "\n" " "'; }
check "agent starts" start_agent "$LOG" --profile a100-mig --device-nodes --cgroup "$T" --root "$ROOT"
sum0=$(tree_sum)
check_has "status: the profile's layout" "mig: GPU 0 (0000:07:00.0): gi2 3g.20gb@4, gi3 2g.10gb@0, gi9 1g.5gb@2, gi10 1g.5gb@3" \
	"$("$nvm" status --root "$ROOT")"
r=$(mig 0 create 5g.25gb); rc=$?
check_eq "a profile the board lacks: status 2" 2 $rc
check_has "and the board's profiles listed" '"5g.25gb": not a GPU instance profile of this board (1g.5gb (19), 2g.10gb (14), 3g.20gb (9), 4g.20gb (5), 7g.40gb (0))' "$r"
r=$(mig 0 create 1g.5gb); rc=$?
check_eq "no slice left for one more: status 2" 2 $rc
check_has "and why" "1g.5gb: more compute slices than the board's 7" "$r"
r=$(mig 1 create 1g.5gb); rc=$?
check_eq "GPU 1 (MIG off): status 2" 2 $rc
check_has "and why" "MIG mode is disabled on this GPU" "$r"
r=$(mig 0 destroy 9,4); rc=$?
check_eq "destroy with one unknown id: status 2" 2 $rc
check_has "names it, and destroys none" '"4": no GPU instance with that id' "$r"
r=$(mig 0 resize 1g.5gb); rc=$?
check_has "an unknown action: refused" '"resize": not an action (create, destroy)' "$r"
r=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$work/nvmirage" mig --root "$ROOT" 0 destroy all 2>&1); rc=$?
check_eq "not root: status 2" 2 $rc
check_has "refused by the agent" "only root may change a GPU's MIG instances" "$r"
check_eq "none of it changed the tree" "$sum0" "$(tree_sum)"

check_eq "destroy the two 1g.5gb" "" "$(mig 0 destroy 9,10 | grep -v done)"
check_eq "capabilities: gi2 and gi3 left" "gi2 gi3 " "$(gis)"
check_eq "their nvidia-caps nodes too" "nvidia-cap1 nvidia-cap2 nvidia-cap21 nvidia-cap22 nvidia-cap30 nvidia-cap31 " "$(caps)"
r=$(nsmi -L)
check_eq "NVIDIA's nvidia-smi -L: GPU 0 with 2 MIG devices" "2" "$(echo "$r" | grep -c '^  MIG ')"
r=$(nsmi mig -lgip)
check_has "mig -lgip: 2 of 7 1g.5gb free" "MIG 1g.5gb        19     2/7" "$r"
check_has "and no room for a 3g.20gb" "MIG 3g.20gb        9     0/2" "$r"
r=$(mig 0 create 1g.5gb:6); rc=$?
check_eq "slot 6, under the 3g.20gb: status 2" 2 $rc
check_has "and why" "1g.5gb: that placement is taken" "$r"
check_eq "create 2g.10gb" "" "$(mig 0 create 2g.10gb | grep -v done)"
r=$(nsmi mig -lgi)
check_has "mig -lgi: where the driver puts it, slot 2: GPU instance 4" "MIG 2g.10gb         14        4          2:2" "$r"
check_eq "capabilities and nodes" "gi2 gi3 gi4 | nvidia-cap1 nvidia-cap2 nvidia-cap21 nvidia-cap22 nvidia-cap30 nvidia-cap31 nvidia-cap39 nvidia-cap40 " \
	"$(gis)| $(caps)"
check_has "the status says so" "gi4 2g.10gb@2" "$("$nvm" status --root "$ROOT")"
check_has "the agent's log too" "mig: GPU 0 (0000:07:00.0): create 2g.10gb -> " "$(cat "$LOG")"

check_eq "destroy all, create 7g.40gb" "" "$( (mig 0 destroy all; mig 0 create 7g.40gb) | grep -v done)"
r=$(nsmi -L)
check_has "nvidia-smi -L: one MIG 7g.40gb" "  MIG 7g.40gb     Device  0:" "$r"
check_eq "and only it" "1" "$(echo "$r" | grep -c '^  MIG ')"
check_eq "gi0, nodes 3 and 4" "gi0 | nvidia-cap1 nvidia-cap2 nvidia-cap3 nvidia-cap4 " "$(gis)| $(caps)"
r=$(timeout 30 "$in_cgroup" "$O" sh -c 'ls /proc/driver/nvidia/capabilities /dev/nvidia-caps/nvidia-cap3' 2>&1)
check_has "outside the targets: none of it" "cannot access '/proc/driver/nvidia/capabilities'" "$r"

# A reader lists the instances while the layout flips between 7g.40gb
# and two 3g.20gb. An instance missing a file counts only if the same
# directory (inode) was at its path before and after the look: one renamed
# out meanwhile is not half made, it is gone.
in_t /usr/bin/python3 -c 'import glob, os, sys
seen = half = 0
while not os.path.exists(sys.argv[1] + "/stop"):
    for d in glob.glob("/proc/driver/nvidia/capabilities/gpu0/mig/gi*"):
        try: ino = os.stat(d).st_ino
        except OSError: continue
        seen += 1
        if os.path.isfile(d + "/access") and os.path.isfile(d + "/ci0/access"): continue
        try: half += os.stat(d).st_ino == ino
        except OSError: pass
print("seen=%d half=%d" % (seen, half))' "$work" > "$work/migread" &
rpid=$!
flips=0
for _ in $(seq 1 40); do
	mig 0 destroy all > /dev/null && mig 0 create 3g.20gb,3g.20gb > /dev/null &&
		mig 0 destroy all > /dev/null && mig 0 create 7g.40gb > /dev/null && flips=$((flips + 1))
done
touch "$work/stop"; wait $rpid; rm -f "$work/stop"
echo "note: $flips rounds of layout changes while a reader listed: $(cat "$work/migread")"
check_eq "40 rounds of changes, each accepted" 40 $flips
check_has "no instance seen half made or half gone" "half=0" "$(cat "$work/migread")"

check_eq "the profile's layout made again" "" "$( (mig 0 destroy all; mig 0 create 3g.20gb,2g.10gb,1g.5gb,1g.5gb) | grep -v done)"
check_eq "gives the tree back byte for byte" "$sum0" "$(tree_sum)"
r=$(nsmi -L)
check_eq "and nvidia-smi -L as at start" "4" "$(echo "$r" | grep -c '^  MIG ')"
stop_agent
check "and the agent removed its tree" test ! -e "$ROOT"

echo "== MIG at runtime, a GPU instance with two compute instances"
sed 's|        - {profile: "3g.20gb", count: 1}|        - {profile: "3g.20gb", count: 1, compute_instances: [{profile: "1c.3g.20gb", count: 2}]}|' \
	profiles/a100-mig.yaml > "$work/ci.yaml"
check "agent starts" start_agent "$LOG" --profile "$work/ci.yaml" --device-nodes --cgroup "$T" --root "$ROOT"
check_has "status: gi2's two compute instances" "gi2 3g.20gb@4 [ci0 1c.3g.20gb@0, ci1 1c.3g.20gb@1], gi3" "$("$nvm" status --root "$ROOT")"
check_eq "gi2's ci0 and ci1, and their nodes 22 and 23" "ci0 ci1 | nvidia-cap21 nvidia-cap22 nvidia-cap23 " \
	"$(in_t sh -c 'ls /proc/driver/nvidia/capabilities/gpu0/mig/gi2 | grep ci | tr "\n" " "')| $(caps | grep -o 'nvidia-cap2[0-9] ' | tr -d '\n')"
check_eq "NVIDIA's nvidia-smi -L: 5 MIG devices, two 1c.3g.20gb" "5 2" \
	"$(nsmi -L | grep -c '^  MIG ') $(nsmi -L | grep -c '^  MIG 1c.3g.20gb ')"
check_eq "destroy gi2" "" "$(mig 0 destroy 2 | grep -v done)"
check_eq "its directory and its three nodes are gone" "gi3 gi9 gi10 | " \
	"$(gis)| $(caps | grep -o 'nvidia-cap2[0-9] ' | tr -d '\n')"
check_eq "and nvidia-smi -L lists the 3 left" 3 "$(nsmi -L | grep -c '^  MIG ')"
check_eq "made again, it has the one compute instance spanning it" "" "$(mig 0 create 3g.20gb | grep -v done)"
check_eq "ci0, nodes 21 and 22" "ci0 | nvidia-cap21 nvidia-cap22 " \
	"$(in_t sh -c 'ls /proc/driver/nvidia/capabilities/gpu0/mig/gi2 | grep ci | tr "\n" " "')| $(caps | grep -o 'nvidia-cap2[0-9] ' | tr -d '\n')"
stop_agent
