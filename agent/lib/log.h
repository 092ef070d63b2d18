/* Logging and error reporting: one place, printf-checked. */
#ifndef NVM_LOG_H
#define NVM_LOG_H

#include <stdarg.h>

enum nvm_level { NVM_ERROR, NVM_WARN, NVM_INFO, NVM_DEBUG };

/* Messages above this level are dropped (set by -v / -q). */
extern int nvm_verbosity;

void nvm_log(enum nvm_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define nvm_err(...)   nvm_log(NVM_ERROR, __VA_ARGS__)
#define nvm_warn(...)  nvm_log(NVM_WARN, __VA_ARGS__)
#define nvm_info(...)  nvm_log(NVM_INFO, __VA_ARGS__)
#define nvm_debug(...) nvm_log(NVM_DEBUG, __VA_ARGS__)

/* Logs an error and returns code: `return nvm_err_r(-EINVAL, "...")`. */
#define nvm_err_r(code, ...) (nvm_err(__VA_ARGS__), (code))

#endif
