/*
 * tap.h: Test Anything Protocol output for the C tests of kernels/, so that
 * .ci/run and scripts/test.sh count them the same way ("ok N - ...",
 * "not ok N - ...", then the plan "1..N"), and the allocator the tests share.
 * Header-only, C and CUDA host C++.
 */
#ifndef GPUSORT_TAP_H
#define GPUSORT_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int	tap_run;
static int	tap_failed;

/* malloc for the tests: out of memory ends the program with status 2 (a failure to the harness). */
static inline void *
xmalloc(size_t bytes)
{
	void	   *p = malloc(bytes ? bytes : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory for %zu bytes\n", bytes);
		exit(2);
	}
	return p;
}

/*
 * Guarded buffers: bytes followed by TAP_GUARD bytes of TAP_POISON, which a
 * function under test must leave as they are (tap_guard_intact).
 */
#define TAP_POISON 0xA5
#define TAP_GUARD 64

static inline unsigned char *
tap_guarded(size_t bytes)
{
	unsigned char *p = (unsigned char *) xmalloc(bytes + TAP_GUARD);

	for (size_t i = 0; i < bytes + TAP_GUARD; i++)
		p[i] = TAP_POISON;
	return p;
}

static inline int
tap_guard_intact(const unsigned char *p, size_t bytes)
{
	for (size_t i = 0; i < TAP_GUARD; i++)
		if (p[bytes + i] != TAP_POISON)
			return 0;
	return 1;
}

/* Records one check; prints "ok"/"not ok" with a printf-style description. */
static inline int
tap_check(int passed, const char *fmt,...)
{
	va_list		ap;

	tap_run++;
	if (!passed)
		tap_failed++;
	printf("%s %d - ", passed ? "ok" : "not ok", tap_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return passed;
}

/* A diagnostic line (TAP comment). */
static inline void
tap_note(const char *fmt,...)
{
	va_list		ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Skips the whole program (no GPU, say): prints the empty plan and returns 0 for main. */
static inline int
tap_skip_all(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	return 0;
}

/* Prints the plan and a summary; the value for main's return. */
static inline int
tap_done(void)
{
	printf("1..%d\n# %d passed, %d failed\n", tap_run, tap_run - tap_failed, tap_failed);
	return tap_failed ? 1 : 0;
}

#endif							/* GPUSORT_TAP_H */
