/* The exit statuses of every command: 0 success, 1 runtime failure, 2 bad
 * input or usage (also what functions that check input return). */
#ifndef NVM_EXIT_STATUS_H
#define NVM_EXIT_STATUS_H

enum { NVM_EXIT_OK = 0, NVM_EXIT_FAIL = 1, NVM_EXIT_USAGE = 2 };

#endif
