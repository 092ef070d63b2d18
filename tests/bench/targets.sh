# Cost by number of targets (sourced by run.sh): an openat+close by a
# process in the last target and by one outside every target, and the
# agent's memory, with 1, 64 and 1000 target cgroups. The kernel side finds
# a task's targets by looking its cgroup and their parents up by id (a hash
# map), so neither figure should grow with the count. Uses run.sh's
# start_agent, pin, ns, least, ratio, $cg2, $bench, $N, $R.

TS=$cg2/nvmb-many
mkdir -p "$TS"
for i in $(seq 1 1000); do mkdir -p "$TS/t$i"; done
echo "by number of targets: openat+close of /etc/hostname, $N times, pinned to CPU 0, the fastest of $R rounds"
for n in 1 64 1000; do
	args=$(for i in $(seq 1 "$n"); do printf ' --cgroup %s/t%d' "$TS" "$i"; done)
	tg= nt= rss=
	for _ in $(seq 1 "$R"); do
		# shellcheck disable=SC2086
		start_agent "$LOG" --profile gb300 $args --root "$ROOT" || exit 1
		rss="$rss $(awk '/VmRSS/ {print $2}' /proc/"$agent_pid"/status)"
		tg="$tg $(pin "$in_cgroup" "$TS/t$n" "$bench" openclose "$N" /etc/hostname | ns)"
		nt="$nt $(pin "$bench" openclose "$N" /etc/hostname | ns)"
		stop_agent
	done
	tg=$(echo "$tg" | least) nt=$(echo "$nt" | least) rss=$(echo "$rss" | least)
	[ "$n" = 1 ] && tg1=$tg nt1=$nt rss1=$rss
	echo "  (8) $n targets: in a target $tg ns (x$(ratio "$tg" "$tg1") of 1 target), outside $nt ns (x$(ratio "$nt" "$nt1")); agent RSS $rss kB (x$(ratio "$rss" "$rss1"))"
done
for i in $(seq 1 1000); do rmdir "$TS/t$i"; done
rmdir "$TS"
