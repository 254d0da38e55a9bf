/*
 * gpusort_pg.h: what the PostgreSQL side of gpusort (src/) shares between its
 * files: the settings (settings.c), the element-type mapping, the one sort
 * entry point that decides where a sort runs (gpusort.c), and the array
 * builder that the array functions, the SRF and the aggregate use.
 *
 * Not to be confused with kernels/gpusort.h, the sorting library's API.
 */
#ifndef GPUSORT_PG_H
#define GPUSORT_PG_H

#include "postgres.h"

#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/sortsupport.h"

#include "gpusort.h"

/* gpusort.device */
typedef enum GpusortDevice
{
	GPUSORT_DEVICE_AUTO,
	GPUSORT_DEVICE_GPU,
	GPUSORT_DEVICE_CPU
} GpusortDevice;

/* settings.c: the settings' variables, and their definitions for _PG_init */
extern void gpusort_define_settings(void);
extern int	gpusort_device;
extern int	gpusort_gpu_min_elements;
extern int	gpusort_algorithm;		/* a gs_algorithm */
extern int	gpusort_device_id;
extern int	gpusort_max_device_memory;	/* MB, 0: no limit */

/*
 * One sort of n non-NULL elements, as the SQL functions hand it to
 * gpusort_run.  Either sorted keys or an argsort is wanted:
 *
 * - sort: dest (n elements) receives the sorted elements.  They come from
 *   source (n contiguous elements, may not overlap dest) or, when source is
 *   NULL, from fill, which writes them into dest.  fill may be called again
 *   when a sort has to start over (an interrupt that did not cancel it, a GPU
 *   failure under gpusort.device = auto), because a sort leaves dest undefined
 *   when it stops early.
 * - argsort: source holds the n keys, untouched; perm (n entries) receives the
 *   0-based positions in sorted order, stable; dest and fill are unused.
 *
 * limit 0 asks for the whole order.  0 < limit < n asks for its first limit
 * elements (or positions) only, which costs less than a full sort: dest (or
 * perm) receives limit entries, and source must hold the n elements (fill is
 * not used).  limit >= n is a full sort.
 */
typedef struct GpusortJob
{
	gs_type		type;
	size_t		n;
	bool		descending;
	const void *source;
	void		(*fill) (void *dest, void *arg);
	void	   *fill_arg;
	void	   *dest;
	bool		dest_filled;	/* dest holds the elements already for the first
								 * try (an in-place sort); fill refills it */
	uint32	   *perm;
	size_t		limit;
} GpusortJob;

/*
 * Runs a sort on the GPU or the CPU (gpusort.c) and records it for
 * gpusort_last_run; with n = 0 it does nothing and records nothing.
 */
extern void gpusort_run(const GpusortJob *job);

/*
 * Whether gpusort_run would sort n elements on a GPU now, as far as the
 * settings and the GPU's (or the GPU server's) state tell without trying.
 */
extern bool gpusort_gpu_likely(size_t n);

/*
 * The interrupt callback for the kernels' CPU functions (gs_interrupt_fn):
 * true when a pending interrupt would end the statement; the caller then
 * runs CHECK_FOR_INTERRUPTS.
 */
extern bool gpusort_interrupt_pending(void *arg);

/* This backend's last sort, for gpusort_last_run (info.c). */
typedef struct GpusortLastRun
{
	bool		valid;			/* false until the first sort */
	int64		elements;
	gs_type		type;
	int			device;			/* -1: the CPU */
	gs_algorithm algorithm;
	double		copy_in_ms;
	double		sort_ms;
	double		copy_out_ms;
	double		total_ms;
	double		queue_ms;		/* server mode: waiting for admission */
	double		device_mb;		/* device memory the sort used */
} GpusortLastRun;

extern GpusortLastRun gpusort_last;

/* Set when gpusort was preloaded: sorts go through the GPU server (server_shmem.c). */
extern bool gpusort_server_mode;

/* server_client.c: sorts through the GPU server (server mode only) */
extern bool gpusort_server_usable(const char **reason);
extern gs_status gpusort_server_sort(const GpusortJob *job, const void *input, int device_wanted,
									 size_t max_device_bytes, double max_queue_ms,
									 gs_run_report *report, double *queue_ms, gs_error *err);
extern const gs_runtime_info *gpusort_server_runtime(void);

/*
 * The cached result of gs_runtime_probe (gpusort.c); probes on first use.  In
 * server mode, what the server found (the backend never loads CUDA).
 */
extern const gs_runtime_info *gpusort_runtime(void);

/* Element type OID -> gs_type; errors for a type gpusort does not sort. */
extern gs_type gpusort_type_from_oid(Oid elemtype);

/* The same without the error: false for a type gpusort does not sort. */
extern bool gpusort_sorts_type(Oid elemtype, gs_type *type);

/*
 * sort_agg_rewrite.c: the gpu_sort_agg Aggref that replaces the call
 * gpu_sort(array_agg(x), ...) when the two agree and the rewrite drops no
 * error and no privilege check, else NULL.  root: the planner's, where the
 * plan's dependencies are recorded (NULL: no rewrite).
 */
struct PlannerInfo;
extern Node *gpusort_rewrite_sort_of_array_agg(struct PlannerInfo *root, const FuncExpr *fcall);

/*
 * The arguments shared by gpu_sort, gpu_argsort and gpu_sort_rows: returns
 * false when the array is NULL (the result is NULL), errors for a NULL
 * descending or a multidimensional array.  nulls_first NULL follows ORDER BY.
 */
extern bool gpusort_get_array_args(FunctionCallInfo fcinfo, const char *funcname,
								   ArrayType **array, bool *owned,
								   bool *descending, bool *nulls_first);

/*
 * For a NULL array argument argno: errors, as for a non-NULL one, where its
 * declared element type is one that ORDER BY cannot sort.
 */
extern void gpusort_check_null_array(FunctionCallInfo fcinfo, int argno);

/*
 * Argument argno as a flat one-dimensional array (any lower bound, NULLs
 * allowed) of a type gpusort sorts; errors otherwise.  *owned as for
 * gpusort_getarg_array; funcname names the caller in the message.
 */
extern ArrayType *gpusort_getarg_1d_array(FunctionCallInfo fcinfo, int argno,
										  const char *funcname, bool *owned);

/*
 * The nitems - nnulls non-NULL elements of a 1-D array, packed: its data
 * area when it has no NULLs, else a copy from gpusort_alloc_large.
 */
extern char *gpusort_packed_values(ArrayType *array, int nitems, int64 nnulls);

/*
 * Allocates a one-dimensional array with lower bound 1 of nvalues non-NULL
 * elements and nnulls NULLs, the NULLs first or last: the header and the NULL
 * bitmap are set, the data area (ARR_DATA_PTR) is left for the caller to
 * fill.  Errors when it would exceed PostgreSQL's array limits; what names
 * the caller in the message.
 */
extern ArrayType *gpusort_new_array(Oid elemtype, int16 typlen, int64 nvalues,
									int64 nnulls, bool nulls_first, const char *what);

/* The number of NULL elements among the nitems of a 1-D array. */
extern int64 gpusort_count_nulls(ArrayType *array, int nitems);

/*
 * The sorted form of array (1-D, any lower bound, NULLs allowed): what
 * gpu_sort returns, and what gpu_sort_rows walks through.  When owned (the
 * array is the function's own copy of argument datum) and it has no NULLs,
 * the sort runs in place and returns array itself with lower bound 1;
 * otherwise it returns a new array in CurrentMemoryContext.
 */
extern ArrayType *gpusort_sort_array(ArrayType *array, bool owned, Datum datum,
									 bool descending, bool nulls_first);

/* any_sort.c: the types gpusort does not pack, sorted with PostgreSQL's comparator */

/*
 * Errors unless ORDER BY could sort elements of the type: one that gpusort
 * packs, or one with a default btree ordering.
 */
extern void gpusort_check_sortable(Oid elemtype);

/*
 * Prepares ssup (in CurrentMemoryContext) to compare values of the type by
 * its default btree ordering under collation, reversed when reverse, with
 * abbreviated keys where the type offers them; errors for a type without
 * an ordering.
 */
extern void gpusort_any_prepare(SortSupport ssup, Oid elemtype, Oid collation, bool reverse);

/* The full comparison of two non-NULL values under ssup, and whether they are equal. */
extern int	gpusort_any_compare(SortSupport ssup, Datum a, Datum b);
extern bool gpusort_any_equal(SortSupport ssup, Datum a, Datum b);

/*
 * Sorts n values in ssup's order, stably (ties keep their input order); each
 * one's input position goes to positions unless it is NULL.  ssup may give
 * up its abbreviated keys on the way.
 */
extern void gpusort_any_sort(SortSupport ssup, Datum *values, int64 n, int64 *positions);

/*
 * A new 1-D array of the first ntake of: nvalues sorted values and nnulls
 * NULLs, the NULLs first or last; what names the caller in an error.
 */
extern ArrayType *gpusort_any_result(Oid elemtype, const Datum *values, int64 nvalues,
									 int64 nnulls, bool nulls_first, int64 ntake,
									 const char *what);

/*
 * gpu_sort (limit -1) and gpu_topk (its first limit elements) of a 1-D array
 * of any sortable type, and gpu_argsort's subscripts.
 */
extern ArrayType *gpusort_any_sort_array(ArrayType *array, Oid collation, bool descending,
										 bool nulls_first, int64 limit, const char *what);
extern ArrayType *gpusort_any_argsort(ArrayType *array, Oid collation, bool descending,
									  bool nulls_first);

/* memory.c */

/*
 * MemoryContextAllocHuge in CurrentMemoryContext, with transparent huge pages
 * asked for when the buffer is large: first touches cost far less.
 */
extern void *gpusort_alloc_large(Size size);

/*
 * memcpy in slices with an interrupt check between them, for copies of an
 * array's size: a cancel waits for one slice (64 MB), not the whole copy.
 */
extern void gpusort_copy_large(void *dest, const void *src, Size size);

/*
 * Loops over an array's elements outside the sorting library check for
 * interrupts every this many elements (a few ms of work).
 */
#define GPUSORT_POLL_ITEMS	((int64) 1 << 20)

/*
 * Argument argno as a flat array.  A stored uncompressed array is read from
 * its TOAST table into a buffer of gpusort_alloc_large.  *owned says whether
 * the result is a copy the function may modify (and return).
 */
extern ArrayType *gpusort_getarg_array(FunctionCallInfo fcinfo, int argno, bool *owned);

/* Reads argument datum again into copy, an owned copy that was modified. */
extern void gpusort_refetch_array(Datum datum, ArrayType *copy);

#endif							/* GPUSORT_PG_H */
