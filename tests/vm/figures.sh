# Sourced by the guest's bench.sh (busybox sh): figures (1) and (3) and the
# loads. Uses bench.sh's start, stop, pin, ns, ratio, least, median_of,
# stat_of, causes_now, causes_since, in_cgroup, $T, $N, $L.
entry=fentry
case "$(uname -m) $(uname -r)" in aarch64\ 6.1.*) entry=tp_btf ;; esac
echo "bench: kernel $(uname -r) ($(uname -m)), TCG; openat+close of /init, $N times, pinned to CPU 0, 3 rounds, fastest"
off= fe= tp= as= goff= gfe= gtp=
for _ in 1 2 3; do
	off="$off $(pin /bench openclose "$N" /init | ns)"
	goff="$goff $(pin /bench getppid $((10 * N)) | ns)"
	start --entry $entry
	fe="$fe $(pin /bench openclose "$N" /init | ns)"
	gfe="$gfe $(pin /bench getppid $((10 * N)) | ns)"
	stop
	start --entry tp_btf
	tp="$tp $(pin /bench openclose "$N" /init | ns)"
	gtp="$gtp $(pin /bench getppid $((10 * N)) | ns)"
	stop
	start --strategy assisted --entry tp_btf
	as="$as $(pin /bench openclose "$N" /init | ns)"
	stop
done
b=$(echo "$off" | least) f=$(echo "$fe" | least) t=$(echo "$tp" | least) a=$(echo "$as" | least)
echo "bench:   no agent:                               $b ns  (rounds:$off)"
echo "bench:   (1) non-target, in-kernel, $entry:       $f ns  ratio $(ratio "$f" "$b")  target <= 1.03 with fentry  (rounds:$fe)"
echo "bench:   (1) non-target, in-kernel, tp_btf:       $t ns  ratio $(ratio "$t" "$b")  (rounds:$tp)"
echo "bench:   (1) non-target, assisted, tp_btf:        $a ns  ratio $(ratio "$a" "$b")  (rounds:$as)"
b=$(echo "$goff" | least) f=$(echo "$gfe" | least) t=$(echo "$gtp" | least)
echo "bench: getppid, $((10 * N)) times (a syscall no entry point covers), pinned to CPU 0"
echo "bench:   no agent:                               $b ns  (rounds:$goff)"
echo "bench:   (1) non-target, $entry:                  $f ns  ratio $(ratio "$f" "$b")  (rounds:$gfe)"
echo "bench:   (1) non-target, tp_btf:                  $t ns  ratio $(ratio "$t" "$b")  (rounds:$gtp)"

echo "bench: open+read+close, $L times, 2 ms apart, in the target cgroup"
start --entry $entry
base=$(in_cgroup "$T" /bench latency "$L" 2000 /run/nvm/proc/driver/nvidia/version)
rik=$(in_cgroup "$T" /bench latency "$L" 2000 /proc/driver/nvidia/version)
ikw=$(/nvmirage status --root /run/nvm | awk '$1 == "ik_rewritten" {print $2}')
stop
start --strategy assisted --entry $entry
ras=$(in_cgroup "$T" /bench latency "$L" 2000 /proc/driver/nvidia/version)
stop
m() { echo "$1" | median_of; }
echo "bench:   the rendered file itself:           $base"
echo "bench:   (3) in-kernel redirect ($entry):    $rik  ratio $(ratio "$(m "$rik")" "$(m "$base")"), +$(awk -v a="$(m "$rik")" -v b="$(m "$base")" 'BEGIN { printf "%.1f", a - b }') us ($ikw rewritten in the kernel)"
echo "bench:   (3) assisted redirect ($entry):     $ras  ratio $(ratio "$(m "$ras")" "$(m "$base")"), +$(awk -v a="$(m "$ras")" -v b="$(m "$base")" 'BEGIN { printf "%.1f", a - b }') us"
unredirected() { stat_of slot_busy deadline_misses agent_failed; }
echo "bench: loads, time scale $time_scale; unredirected reads (and the kernel's count of misses, of reads, restores and fork repairs, by cause)"
for strategy in auto assisted; do
	start --strategy $strategy
	for where in literal data; do
		arg=; [ $where = data ] && arg=data
		c0=$(unredirected) k0=$(causes_now)
		good=$(in_cgroup "$T" /reader threads 4 50 $arg | sed -n 's/^good=\([0-9]*\) of 200$/\1/p')
		echo "bench:   $strategy, 4 threads x 50 opens ($where): $((200 - ${good:-0})) of 200 (counted $(($(unredirected) - c0)): $(causes_since "$k0"))"
		c0=$(unredirected) k0=$(causes_now)
		r=$(in_cgroup "$T" /reader tree 10 $arg)
		echo "bench:   $strategy, threads + forks + exec ($where): $(echo "$r" | sed -n 's/^tree_missed=//p') of $(echo "$r" | sed -n 's/^tree_reads=//p') (counted $(($(unredirected) - c0)): $(causes_since "$k0")), $(echo "$r" | sed -n 's/^tree_broken=//p') broken"
		m0=$(stat_of fork_missed) f0=$(stat_of fork_repairs)
		r=$(in_cgroup "$T" /reader forks 100 $arg)
		echo "bench:   $strategy, 100 forks while 2 threads open ($where): $(($(stat_of fork_repairs) - f0)) children repaired, $(($(stat_of fork_missed) - m0)) repairs missed, $(echo "$r" | sed -n 's/^forks_broken=//p') broken"
	done
	stop
done
