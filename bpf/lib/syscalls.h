/* The path syscalls nvmirage redirects: which argument holds the path.
 * Numbers are per architecture (x86-64 table, and the generic table arm64
 * uses). io_uring opens and ia32 compat syscalls do not pass these
 * tracepoints with these numbers and are not covered. */
#ifndef NVM_SYSCALLS_H
#define NVM_SYSCALLS_H

/* NVM_PATH_SYSCALLS(X) calls X(function name, path argument) for each of
 * them, for the fentry entry points on NVM_SYS_PREFIX<name>;
 * NVM_EXEC_SYSCALLS(X) the same for execve and execveat, whose paths only
 * exact file rules redirect (nvm_is_exec). */
#if defined(__TARGET_ARCH_x86)
#define NVM_SYS_PREFIX "__x64_sys_"
#define NVM_PATH_SYSCALLS(X)                                                   \
	X(open, 0) X(newstat, 0) X(newlstat, 0) X(access, 0) X(chdir, 0)         \
	X(readlink, 0) X(statfs, 0) X(getxattr, 0) X(lgetxattr, 0)              \
	X(listxattr, 0) X(llistxattr, 0) X(openat, 1) X(newfstatat, 1)          \
	X(readlinkat, 1) X(faccessat, 1) X(statx, 1) X(openat2, 1)              \
	X(faccessat2, 1)
#define NVM_EXEC_SYSCALLS(X) X(execve, 0) X(execveat, 1)

static __always_inline bool nvm_is_exec(long id)
{
	return id == 59 || id == 322;
}

static __always_inline int nvm_path_arg(long id)
{
	switch (id) {
	case 59:  /* execve */
	case 2:   /* open */
	case 4:   /* stat */
	case 6:   /* lstat */
	case 21:  /* access */
	case 80:  /* chdir */
	case 89:  /* readlink */
	case 137: /* statfs */
	case 191: /* getxattr */
	case 192: /* lgetxattr */
	case 194: /* listxattr */
	case 195: /* llistxattr */
		return 0;
	case 322: /* execveat */
	case 257: /* openat */
	case 262: /* newfstatat */
	case 267: /* readlinkat */
	case 269: /* faccessat */
	case 332: /* statx */
	case 437: /* openat2 */
	case 439: /* faccessat2 */
		return 1;
	}
	return -1;
}

static __always_inline long nvm_syscall_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_ax);
}
#elif defined(__TARGET_ARCH_arm64)
#define NVM_SYS_PREFIX "__arm64_sys_"
#define NVM_PATH_SYSCALLS(X)                                                   \
	X(getxattr, 0) X(lgetxattr, 0) X(listxattr, 0) X(llistxattr, 0)         \
	X(statfs, 0) X(chdir, 0) X(faccessat, 1) X(openat, 1) X(readlinkat, 1)  \
	X(newfstatat, 1) X(statx, 1) X(openat2, 1) X(faccessat2, 1)
#define NVM_EXEC_SYSCALLS(X) X(execve, 0) X(execveat, 1)

static __always_inline bool nvm_is_exec(long id)
{
	return id == 221 || id == 281;
}

static __always_inline int nvm_path_arg(long id)
{
	switch (id) {
	case 221: /* execve */
	case 8:   /* getxattr */
	case 9:   /* lgetxattr */
	case 11:  /* listxattr */
	case 12:  /* llistxattr */
	case 43:  /* statfs */
	case 49:  /* chdir */
		return 0;
	case 281: /* execveat */
	case 48:  /* faccessat */
	case 56:  /* openat */
	case 78:  /* readlinkat */
	case 79:  /* newfstatat */
	case 291: /* statx */
	case 437: /* openat2 */
	case 439: /* faccessat2 */
		return 1;
	}
	return -1;
}

static __always_inline long nvm_syscall_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, syscallno);
}
#else
#error "nvmirage: unsupported __TARGET_ARCH"
#endif

#endif
