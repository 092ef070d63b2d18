#include "log.h"

#include <stdio.h>
#include <time.h>

int nvm_verbosity = NVM_INFO;

static const char *const level_names[] = {
	[NVM_ERROR] = "error", [NVM_WARN] = "warning",
	[NVM_INFO] = "info", [NVM_DEBUG] = "debug",
};

void nvm_log(enum nvm_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > nvm_verbosity)
		return;
	/* Errors are always plain "nvmirage: error: ..." so scripts can grep
	 * them; other levels carry a timestamp because they come from a
	 * long-running agent. */
	if (level == NVM_ERROR) {
		fprintf(stderr, "nvmirage: error: ");
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		fprintf(stderr, "%02d:%02d:%02d.%03ld nvmirage: %s: ", tm.tm_hour,
			tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
			level_names[level]);
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
