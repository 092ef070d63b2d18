#include "unit.h"

#include "lib/cpuset.h"

static void parses_and_formats_lists(void **state)
{
	struct nvm_cpuset s;
	const char *why;
	char buf[128];

	(void)state;
	assert_int_equal(cpuset_parse_list(&s, "0-3,8,10-11\n", &why), 0);
	assert_true(cpuset_has(&s, 0) && cpuset_has(&s, 3) && cpuset_has(&s, 8));
	assert_false(cpuset_has(&s, 4) || cpuset_has(&s, 9) || cpuset_has(&s, 12));
	assert_int_equal(cpuset_format_list(&s, buf, sizeof(buf)), 11);
	assert_string_equal(buf, "0-3,8,10-11");
	assert_int_equal(cpuset_span(&s), 12);
}

static void rejects_bad_lists(void **state)
{
	static const char *const bad[] = { "", "a", "3-1", "1,", "1-", "0-4096", "1;2", "-1" };
	struct nvm_cpuset s;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(cpuset_parse_list(&s, bad[i], &why), -1);
		assert_non_null(why);
	}
}

static void formats_masks_like_the_kernel(void **state)
{
	struct nvm_cpuset s;
	char buf[256];

	(void)state;
	cpuset_clear(&s);
	cpuset_range(&s, 0, 1);
	assert_true(cpuset_format_mask(&s, 2, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "3");
	cpuset_clear(&s);
	cpuset_range(&s, 0, 71);
	assert_true(cpuset_format_mask(&s, 144, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "0000,00000000,000000ff,ffffffff,ffffffff");
	cpuset_clear(&s);
	cpuset_range(&s, 72, 143);
	assert_true(cpuset_format_mask(&s, 144, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "ffff,ffffffff,ffffff00,00000000,00000000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_and_formats_lists),
		cmocka_unit_test(rejects_bad_lists),
		cmocka_unit_test(formats_masks_like_the_kernel),
	};

	return cmocka_run_group_tests_name("cpuset", tests, NULL, NULL);
}
