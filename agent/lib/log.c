#include "lib/log.h"

#include <stdio.h>
#include <time.h>

int nvm_verbosity = NVM_INFO;

static const char *const level_names[] = {
	[NVM_ERROR] = "error", [NVM_WARN] = "warning",
	[NVM_INFO] = "info", [NVM_DEBUG] = "debug",
};

void nvm_log(enum nvm_level level, const char *fmt, ...)
{
	char line[2048];
	size_t n, room = sizeof(line) - 1;
	va_list ap;
	int len;

	if ((int)level > nvm_verbosity)
		return;
	/* Errors are always plain "nvmirage: error: ..." so scripts can grep
	 * them; other levels carry a timestamp because they come from a
	 * long-running agent. */
	if (level == NVM_ERROR) {
		len = snprintf(line, room, "nvmirage: error: ");
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		len = snprintf(line, room, "%02d:%02d:%02d.%03ld nvmirage: %s: ", tm.tm_hour,
			       tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, level_names[level]);
	}
	n = len > 0 ? (size_t)len : 0;
	va_start(ap, fmt);
	len = vsnprintf(line + n, room - n, fmt, ap);
	va_end(ap);
	n += len > 0 ? ((size_t)len < room - n ? (size_t)len : room - n - 1) : 0;
	line[n++] = '\n';
	/* One write per line: the agent's threads log at once, and their
	 * lines must not interleave. */
	fwrite(line, 1, n, stderr);
}
