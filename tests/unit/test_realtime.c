/* The real-time section the pod walk binds in (realtime_enter/leave):
 * SCHED_FIFO inside, inherited by a child forked there (the one that
 * enters a container's namespace), ordinary again after, nice kept; a
 * thread that is real-time already is left as it is. Needs root (or
 * CAP_SYS_NICE), as the agent does. */
#include "unit.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "lib/realtime.h"

/* The policy a child forked now runs under, as the child sees it. */
static int child_policy(void)
{
	int st;
	pid_t c = fork();

	if (c == 0)
		_exit(sched_getscheduler(0));
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void raises_and_lowers_an_ordinary_thread(void **state)
{
	struct sched_param sp;
	struct rt_section rt;

	(void)state;
	assert_int_equal(setpriority(PRIO_PROCESS, 0, 3), 0);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	realtime_enter(&rt, NVM_RT_PRIORITY);
	assert_true(rt.raised);
	assert_false(rt.refused);
	assert_int_equal(sched_getscheduler(0), SCHED_FIFO);
	assert_int_equal(sched_getparam(0, &sp), 0);
	assert_int_equal(sp.sched_priority, NVM_RT_PRIORITY);
	assert_int_equal(child_policy(), SCHED_FIFO);
	realtime_leave(&rt);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	assert_int_equal(getpriority(PRIO_PROCESS, 0), 3);
	assert_int_equal(child_policy(), SCHED_OTHER);
	setpriority(PRIO_PROCESS, 0, 0);
}

static void leaves_a_realtime_thread_as_it_is(void **state)
{
	struct sched_param sp = { .sched_priority = 20 };
	struct rt_section rt;

	(void)state;
	assert_int_equal(sched_setscheduler(0, SCHED_FIFO, &sp), 0);
	realtime_enter(&rt, NVM_RT_PRIORITY);
	assert_false(rt.raised);
	assert_int_equal(sched_getparam(0, &sp), 0);
	assert_int_equal(sp.sched_priority, 20);
	realtime_leave(&rt);
	assert_int_equal(sched_getscheduler(0), SCHED_FIFO);
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(raises_and_lowers_an_ordinary_thread),
		cmocka_unit_test(leaves_a_realtime_thread_as_it_is),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
