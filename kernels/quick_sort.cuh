/*
 * quick_sort.cuh: the quicksort's internal interface for tests (not part of
 * the API).  The depth limits normally come from n; a test lowers them to
 * send tasks down the fallback paths (merge sort for first-phase tasks, an
 * in-place bitonic sort for second-phase ranges) on ordinary inputs.
 */
#ifndef GPUSORT_QUICK_SORT_CUH
#define GPUSORT_QUICK_SORT_CUH

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Overrides the depth limits of the first phase (partition levels before a
 * task goes to the merge sort) and of the second phase (partitions inside a
 * block before a range goes to the bitonic sort); -1 restores the default.
 * The second-phase limit belongs to the thesis' in-block quicksort, which
 * the default (a block merge sort) does not use: second_phase >= 0 also
 * selects the in-block quicksort as the second phase.  Process-wide; only
 * in the library that tests and benchmarks link (built with -DGS_TEST_HOOKS;
 * see the Makefile).
 */
#ifdef GS_TEST_HOOKS
void		gs_quick_set_depth_limits(int first_phase, int second_phase);
#endif

#ifdef __cplusplus
}
#endif

#endif							/* GPUSORT_QUICK_SORT_CUH */
