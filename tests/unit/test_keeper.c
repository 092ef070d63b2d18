#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "engine/keeper.h"

/* The keeper writes into this process's memory, as it would into a
 * target's: these stand for path strings an agent rewrote. */
static char path_a[32] = "/proc/driver/nvidia/version";
static char path_b[32] = "/proc/driver/nvidia/version";
static const char orig[] = "/proc/driver/nvidia";
static const char repl[] = "//////////run/nvm/p";

#define SPAN (sizeof(orig) - 1)

static struct patch_rec *book_here(struct patchbook *b, char *where, bool live)
{
	struct patch_rec *r = book_add(b, 1, (uint64_t)(uintptr_t)where);

	assert_non_null(r);
	r->tgid = (uint32_t)getpid();
	r->tid = (uint32_t)syscall(SYS_gettid);
	r->span = SPAN;
	memcpy(r->orig, orig, SPAN);
	memcpy(r->repl, repl, SPAN);
	r->live = live;
	return r;
}

/* The agent's end without a clean stop: its end of the socket closes. */
static void start(struct keeper *k, struct patchbook *b)
{
	struct keeper_watch w = { .book = b, .patches_fd = -1, .settle_ns = 1000000 };

	assert_int_equal(keeper_start(k, &w), 0);
}

static void agent_dies(struct keeper *k)
{
	int status;

	close(k->fd);
	assert_int_equal(waitpid(k->pid, &status, 0), k->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void puts_back_what_a_killed_agent_left(void **state)
{
	struct patchbook *b = book_new_shared();
	struct keeper k;

	(void)state;
	assert_non_null(b);
	memcpy(path_a, repl, SPAN); /* rewritten, and booked live */
	book_here(b, path_a, true);
	memcpy(path_b, repl, SPAN); /* rewritten, but booked restored */
	book_here(b, path_b, false);
	capture_begin(); /* the keeper logs to the stderr it is started with */
	start(&k, b);
	agent_dies(&k);
	assert_non_null(strstr(capture_end(), "put back the original bytes of 1 rewritten path it left"));
	assert_string_equal(path_a, "/proc/driver/nvidia/version");
	assert_memory_equal(path_b, repl, SPAN); /* not its to touch */
	book_free_shared(b);
}

static void leaves_bytes_the_process_changed(void **state)
{
	struct patchbook *b = book_new_shared();
	struct keeper k;

	(void)state;
	assert_non_null(b);
	strcpy(path_a, "/home/user/some/other/file"); /* no longer the replacement */
	book_here(b, path_a, true);
	/* A half-written record: its replacement is not what memory holds. */
	memcpy(path_b, repl, SPAN);
	book_here(b, path_b, true)->repl[3] = 'x';
	start(&k, b);
	agent_dies(&k);
	assert_string_equal(path_a, "/home/user/some/other/file");
	assert_memory_equal(path_b, repl, SPAN);
	book_free_shared(b);
}

static void a_clean_stop_writes_nothing(void **state)
{
	struct patchbook *b = book_new_shared();
	struct keeper k;

	(void)state;
	assert_non_null(b);
	memcpy(path_a, repl, SPAN);
	book_here(b, path_a, true);
	start(&k, b);
	keeper_stop(&k); /* returns once the keeper has exited */
	assert_int_equal(k.pid, 0);
	assert_memory_equal(path_a, repl, SPAN);
	book_free_shared(b);
}

/* A keeper killed before the agent stops: the stop costs no SIGPIPE,
 * only a warning. */
static void stops_cleanly_when_the_keeper_is_gone(void **state)
{
	struct patchbook *b = book_new_shared();
	struct keeper k;
	int status;

	(void)state;
	assert_non_null(b);
	start(&k, b);
	kill(k.pid, SIGKILL);
	assert_int_equal(waitpid(k.pid, &status, 0), k.pid);
	capture_begin();
	keeper_stop(&k); /* reaps nothing more: it returns */
	assert_non_null(strstr(capture_end(), "keeper:"));
	assert_int_equal(k.pid, 0);
	book_free_shared(b);
}

/* The links handed over stay open in the keeper until it is told to let
 * go (a clean stop). A pipe's write end stands for a link: its read end
 * sees end of file once no process holds it. */
static bool held_open(int rd)
{
	char c;

	fcntl(rd, F_SETFL, O_NONBLOCK);
	return read(rd, &c, 1) < 0 && errno == EAGAIN;
}

/* Two pipes, their write ends handed to the keeper (answered: it has
 * them) as an entry link (in) and an exit link (out), and closed here. */
static void hand_over_pipes(struct keeper *k, int in[2], int out[2])
{
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(keeper_hold(k, &in[1], 1, true), 0);
	assert_int_equal(keeper_hold(k, &out[1], 1, false), 0);
	close(in[1]);
	close(out[1]);
}

static void holds_the_links_until_told(void **state)
{
	struct patchbook *b = book_new_shared();
	struct keeper k;
	int in[2], out[2];

	(void)state;
	assert_non_null(b);
	start(&k, b);
	hand_over_pipes(&k, in, out);
	assert_true(held_open(in[0]));
	assert_true(held_open(out[0]));
	keeper_let_go(&k); /* answered once the keeper has closed them */
	assert_false(held_open(in[0])); /* end of file: nobody holds it */
	assert_false(held_open(out[0]));
	close(in[0]);
	close(out[0]);
	keeper_stop(&k);
	book_free_shared(b);
}

/* After the agent's end the exit side is let go last: once the bytes are
 * back, and after the entry side. */
static void lets_the_exit_side_go_after_the_bytes_are_back(void **state)
{
	struct patchbook *b = book_new_shared();
	struct keeper k;
	int in[2], out[2];
	char c;

	(void)state;
	assert_non_null(b);
	memcpy(path_a, repl, SPAN);
	book_here(b, path_a, true);
	start(&k, b);
	hand_over_pipes(&k, in, out);
	close(k.fd); /* the agent's end */
	assert_int_equal(read(out[0], &c, 1), 0); /* blocks until let go */
	assert_memory_equal(path_a, orig, SPAN);
	assert_false(held_open(in[0]));
	assert_int_equal(waitpid(k.pid, NULL, 0), k.pid);
	close(in[0]);
	close(out[0]);
	book_free_shared(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(puts_back_what_a_killed_agent_left),
		cmocka_unit_test(leaves_bytes_the_process_changed),
		cmocka_unit_test(a_clean_stop_writes_nothing),
		cmocka_unit_test(stops_cleanly_when_the_keeper_is_gone),
		cmocka_unit_test(holds_the_links_until_told),
		cmocka_unit_test(lets_the_exit_side_go_after_the_bytes_are_back),
	};

	return cmocka_run_group_tests_name("keeper", tests, NULL, NULL);
}
