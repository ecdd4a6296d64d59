/*
 * test_json.c — unit tests of src/json.c, the streaming JSON writer:
 * commas, nesting, the two styles and line breaks, escaping, numbers
 * (non-finite ones become null), the closing newline.
 *
 * Every expected text is written out in full; the reports' stored
 * outputs (tests/golden.sh) check the writer at the scale of a report.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Every test writes into a fresh buffer through a fresh writer. */
struct fix {
	struct vp_buf b;
	struct vp_json j;
};

static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof *f);

	if (f == NULL)
		return -1;
	vp_buf_init(&f->b);
	vp_json_init(&f->j, &f->b);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;

	vp_buf_free(&f->b);
	free(f);
	return 0;
}

static void
empty_containers(void **state)
{
	struct fix *f = *state;
	struct vp_json *j = &f->j;

	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_array(j, "a", VP_JSON_INLINE);
	vp_json_end(j);
	vp_json_object(j, "o", VP_JSON_INLINE);
	vp_json_end(j);
	/* A block array keeps its brackets on lines of their own. */
	vp_json_array(j, "b", VP_JSON_BLOCK);
	vp_json_end(j);
	vp_json_end(j);
	assert_string_equal(f->b.s, "{\"a\": [], \"o\": {}, \"b\": [\n\n]}\n");
}

/* Commas go between values, never before the first or after the last,
 * at every depth. */
static void
commas_and_nesting(void **state)
{
	struct fix *f = *state;
	struct vp_json *j = &f->j;

	vp_json_array(j, NULL, VP_JSON_INLINE);
	vp_json_u64(j, NULL, 1);
	vp_json_array(j, NULL, VP_JSON_INLINE);
	vp_json_u64(j, NULL, 2);
	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_u64(j, "x", 3);
	vp_json_array(j, "y", VP_JSON_INLINE);
	vp_json_end(j);
	vp_json_end(j);
	vp_json_end(j);
	vp_json_null(j, NULL);
	vp_json_end(j);
	assert_string_equal(f->b.s, "[1, [2, {\"x\": 3, \"y\": []}], null]\n");
	assert_int_equal(j->depth, 0);
}

/* The layouts the reports use: compare's cards one a line, and the
 * estimate's sections one a line under the first. */
static void
block_and_breaks(void **state)
{
	struct fix *f = *state;
	struct vp_json *j = &f->j;

	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_str(j, "m", "x");
	vp_json_array(j, "cards", VP_JSON_BLOCK);
	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_u64(j, "a", 1);
	vp_json_end(j);
	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_u64(j, "a", 2);
	vp_json_end(j);
	vp_json_end(j);
	vp_json_end(j);
	assert_string_equal(f->b.s, "{\"m\": \"x\", \"cards\": [\n"
	    "  {\"a\": 1},\n"
	    "  {\"a\": 2}\n"
	    "]}\n");

	f->b.len = 0;
	f->b.s[0] = '\0';
	vp_json_init(j, &f->b);
	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_break(j);		/* before the first: nothing */
	vp_json_object(j, "s1", VP_JSON_INLINE);
	vp_json_u64(j, "a", 1);
	vp_json_u64(j, "b", 2);
	vp_json_end(j);
	vp_json_break(j);
	vp_json_u64(j, "s2", 3);
	vp_json_u64(j, "s3", 4);	/* no break: the same line */
	vp_json_break(j);
	vp_json_array(j, "s4", VP_JSON_INLINE);
	vp_json_break(j);		/* in a nested one: two spaces */
	vp_json_bool(j, NULL, true);
	vp_json_break(j);
	vp_json_bool(j, NULL, false);
	vp_json_end(j);
	vp_json_end(j);
	assert_string_equal(f->b.s, "{\"s1\": {\"a\": 1, \"b\": 2},\n"
	    " \"s2\": 3, \"s3\": 4,\n"
	    " \"s4\": [true,\n"
	    "  false]}\n");
}

/* Strings go through vp_buf_json_str: quotes, backslashes and control
 * characters are escaped, in values and in keys; a NULL string is null. */
static void
escaping(void **state)
{
	struct fix *f = *state;
	struct vp_json *j = &f->j;

	vp_json_object(j, NULL, VP_JSON_INLINE);
	/* quote, backslash, newline → \" \\ \n; 0x01 and 0x1f → \u00XX. */
	vp_json_str(j, "k\"ey", "a\"b\\c\nd\x01" "e\x1f");
	/* UTF-8 (é = C3 A9) and '/' pass through. */
	vp_json_str(j, "u", "caf\xc3\xa9/");
	vp_json_str(j, "e", "");
	vp_json_str(j, "n", NULL);	/* no string: null */
	vp_json_end(j);
	assert_string_equal(f->b.s, "{\"k\\\"ey\": "
	    "\"a\\\"b\\\\c\\nd\\u0001e\\u001f\", \"u\": \"caf\xc3\xa9/\", "
	    "\"e\": \"\", \"n\": null}\n");
}

static void
numbers(void **state)
{
	struct fix *f = *state;
	struct vp_json *j = &f->j;

	vp_json_array(j, NULL, VP_JSON_INLINE);
	vp_json_u64(j, NULL, 0);
	vp_json_u64(j, NULL, UINT64_MAX);	/* 2^64 - 1 */
	vp_json_num(j, NULL, 0.37);
	vp_json_num(j, NULL, 1.105934);	/* %g: six digits, 1.10593 */
	vp_json_num(j, NULL, 1e9);		/* %g: 1e+09 */
	vp_json_num(j, NULL, 0);
	vp_json_fixed(j, NULL, 7903.25, 1);	/* 7903.2: ties to even */
	vp_json_fixed(j, NULL, 16.58456, 4);	/* 16.5846 */
	vp_json_fixed(j, NULL, 1e9, 0);	/* 1000000000 */
	vp_json_bool(j, NULL, false);
	vp_json_end(j);
	assert_string_equal(f->b.s, "[0, 18446744073709551615, 0.37, 1.10593, "
	    "1e+09, 0, 7903.2, 16.5846, 1000000000, false]\n");
}

/* JSON has no NaN or infinity: both writers print null instead, and the
 * member is still there with its key. */
static void
non_finite_is_null(void **state)
{
	struct fix *f = *state;
	struct vp_json *j = &f->j;

	vp_json_object(j, NULL, VP_JSON_INLINE);
	vp_json_num(j, "nan", NAN);
	vp_json_num(j, "inf", INFINITY);
	vp_json_num(j, "minf", -INFINITY);
	vp_json_fixed(j, "fnan", NAN, 1);
	vp_json_fixed(j, "finf", INFINITY, 4);
	vp_json_end(j);
	assert_string_equal(f->b.s, "{\"nan\": null, \"inf\": null, \"minf\": "
	    "null, \"fnan\": null, \"finf\": null}\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(empty_containers, setup, teardown),
		cmocka_unit_test_setup_teardown(commas_and_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(block_and_breaks, setup, teardown),
		cmocka_unit_test_setup_teardown(escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(non_finite_is_null, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
