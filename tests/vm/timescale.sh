# Sourced by the guest's scripts: the guest's time scale, its time for the
# agent's kind of work (bench calibrate: the median round, as the guest
# usually runs) over the host's (its fastest round, measured just before
# it booted this guest: nvm.hostcal=NS on the kernel command line).
# Emulation (TCG) is tens of times slower than the host, so every time
# limit in the guest, the agent's (--time-scale) and the tests' own, is
# this many times its host value. Sets time_scale.
hostcal=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^nvm.hostcal=//p')
guestcal=$(/bench calibrate | sed -n 's/^median_ns=//p')
# At least 1, rounded up to a tenth.
time_scale=$(awk -v g="${guestcal:-0}" -v h="${hostcal:-0}" 'BEGIN {
	s = (h > 0 && g > 0) ? g / h : 1; if (s < 1) s = 1
	printf "%g", int(s * 10 + 0.999) / 10 }')
echo "note: time scale $time_scale: calibration $guestcal ns here, $hostcal ns on the host"

# scaled N: N (seconds, or a count of polls) times the time scale, whole.
scaled() { awk -v n="$1" -v s="$time_scale" 'BEGIN { printf "%d", n * s + 0.999 }'; }
