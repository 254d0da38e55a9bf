/*
 * memory.c: large host buffers, and stored arrays fetched straight into one.
 *
 * Memory a backend touches for the first time costs a page fault per 4 KiB
 * page; for the tens of megabytes of a large array that is more than the sort
 * itself (measured: a 40 MB memcpy into fresh memory took 113-128 ms on the
 * development VM, into memory advised for transparent huge pages 12 ms).  So
 * every buffer of an array's size that gpusort allocates asks for huge pages,
 * and a stored (TOASTed, uncompressed) array is read from its TOAST table into
 * such a buffer instead of into the fresh palloc chunk the detoaster would
 * use.  The fetched copy is the function's own, so gpu_sort can sort in it and
 * return it: one copy of the array in all, the one that reads it.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpusort_pg.h"

/* Buffers at least this large get huge-page advice; a huge page is 2 MiB on x86-64. */
#define LARGE_BUFFER_BYTES	((Size) 4 * 1024 * 1024)
#define HUGE_PAGE_BYTES		((uintptr_t) 2 * 1024 * 1024)

/* Linux 5.14's madvise(MADV_POPULATE_WRITE), where the headers predate it */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define POPULATE_CHUNK_BYTES	((Size) 64 * 1024 * 1024)
#define TOUCH_STRIDE_BYTES		((Size) 4096)	/* the smallest page size */

/*
 * Maps the pages of [start, start + size) now, a chunk at a time with an
 * interrupt check between chunks.  One madvise call maps many pages for the
 * price of one system call, where first touches would fault page by page in
 * whatever order the sort writes: on the development VM populating 40 MB took
 * 12 ms in 4 KiB pages and 2.4 ms in huge pages, touching it 135-160 ms.  It
 * matters most where transparent huge pages are off, and it bounds the time
 * a cancel waits, since a fault cannot be interrupted.  Kernels older than
 * 5.14 refuse the advice; there each page is touched instead.
 */
static void
populate(char *start, Size size)
{
	Size		done;
	bool		advice_works = true;

	for (done = 0; done < size; done += POPULATE_CHUNK_BYTES)
	{
		Size		chunk = Min(POPULATE_CHUNK_BYTES, size - done);

		CHECK_FOR_INTERRUPTS();
		if (advice_works && madvise(start + done, chunk, MADV_POPULATE_WRITE) == 0)
			continue;

		/*
		 * The kernel refused the advice (older than 5.14): fault the chunk in
		 * by touching a byte of each page, value unchanged, so that a cancel
		 * still waits for one chunk at most and not for the sort's first
		 * pass through the whole buffer.
		 */
		advice_works = false;
		for (Size off = 0; off < chunk; off += TOUCH_STRIDE_BYTES)
		{
			volatile char *b = (volatile char *) (start + done + off);

			*b = *b;
		}
	}
}

void
gpusort_copy_large(void *dest, const void *src, Size size)
{
	Size		done;

	for (done = 0; done < size; done += POPULATE_CHUNK_BYTES)
	{
		CHECK_FOR_INTERRUPTS();
		memcpy((char *) dest + done, (const char *) src + done, Min(POPULATE_CHUNK_BYTES, size - done));
	}
}

void *
gpusort_alloc_large(Size size)
{
	void	   *p = MemoryContextAllocHuge(CurrentMemoryContext, size);

#ifdef MADV_HUGEPAGE
	if (size >= LARGE_BUFFER_BYTES)
	{
		uintptr_t	start = ((uintptr_t) p + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
		uintptr_t	end = ((uintptr_t) p + size) & ~(HUGE_PAGE_BYTES - 1);

		if (end > start)
		{
			/* advice only: where the kernel has no huge pages it is ignored */
			(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
			populate((char *) start, end - start);
		}
	}
#endif
	return p;
}

/* The TOAST pointer of a stored, uncompressed value, or false. */
static bool
stored_uncompressed(struct varlena *raw, struct varatt_external *pointer)
{
	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return false;
	VARATT_EXTERNAL_GET_POINTER(*pointer, raw);
	return !VARATT_EXTERNAL_IS_COMPRESSED(*pointer);
}

/* Reads the stored value of pointer into result, which has room for it. */
static void
fetch_stored(const struct varatt_external *pointer, struct varlena *result)
{
	int32		size = VARATT_EXTERNAL_GET_EXTSIZE(*pointer);
	Relation	toastrel;

	SET_VARSIZE(result, size + VARHDRSZ);
	if (size == 0)
		return;
	toastrel = table_open(pointer->va_toastrelid, AccessShareLock);
	table_relation_fetch_toast_slice(toastrel, pointer->va_valueid, size, 0, size, result);
	table_close(toastrel, AccessShareLock);
}

ArrayType *
gpusort_getarg_array(FunctionCallInfo fcinfo, int argno, bool *owned)
{
	Datum		datum = PG_GETARG_DATUM(argno);
	struct varlena *raw = (struct varlena *) DatumGetPointer(datum);
	struct varatt_external pointer;
	ArrayType  *array;

	if (stored_uncompressed(raw, &pointer))
	{
		array = (ArrayType *) gpusort_alloc_large(VARATT_EXTERNAL_GET_EXTSIZE(pointer) + VARHDRSZ);
		fetch_stored(&pointer, (struct varlena *) array);
		*owned = true;
		return array;
	}

	/*
	 * Otherwise PostgreSQL's detoaster: a compressed, short-header or
	 * expanded value comes back as a new copy, which is ours; a plain inline
	 * value comes back as itself, which is not.
	 */
	array = DatumGetArrayTypeP(datum);
	*owned = ((Pointer) array != (Pointer) raw);
	return array;
}

void
gpusort_refetch_array(Datum datum, ArrayType *copy)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(datum);
	struct varatt_external pointer;
	ArrayType  *again;

	if (stored_uncompressed(raw, &pointer))
	{
		fetch_stored(&pointer, (struct varlena *) copy);
		return;
	}
	again = DatumGetArrayTypePCopy(datum);
	Assert(VARSIZE(again) == VARSIZE(copy));
	gpusort_copy_large(copy, again, VARSIZE(again));
	pfree(again);
}
