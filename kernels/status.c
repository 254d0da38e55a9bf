/*
 * status.c: names of types, algorithms and statuses, and the one function that
 * fills a gs_error.  Shared by the CPU and GPU halves of the library.
 */
#include <stdarg.h>
#include <stdio.h>

#include "gpusort.h"
#include "internal.h"

size_t
gs_type_size(gs_type type)
{
	switch (type)
	{
		case GS_INT2:
			return 2;
		case GS_INT4:
		case GS_FLOAT4:
			return 4;
		case GS_INT8:
		case GS_FLOAT8:
			return 8;
		default:
			return 0;
	}
}

const char *
gs_type_name(gs_type type)
{
	static const char *const names[GS_NUM_TYPES] = {"int2", "int4", "int8", "float4", "float8"};

	return (unsigned) type < GS_NUM_TYPES ? names[type] : "unknown";
}

const char *
gs_algorithm_name(gs_algorithm a)
{
	static const char *const names[GS_NUM_ALGORITHMS] = {"auto", "radix", "merge", "bitonic", "quick"};

	return (unsigned) a < GS_NUM_ALGORITHMS ? names[a] : "unknown";
}

const char *
gs_status_name(gs_status s)
{
	static const char *const names[GS_NUM_STATUSES] = {
		"ok", "invalid argument", "too large", "out of host memory",
		"out of device memory", "device memory limit", "built without cuda",
		"no driver", "no device", "cuda error", "interrupted", "gpu lost", "timed out"
	};

	return (unsigned) s < GS_NUM_STATUSES ? names[s] : "unknown";
}

gs_status
gs_fail(gs_error *err, gs_status status, const char *fmt,...)
{
	if (err != NULL)
	{
		va_list		ap;

		err->status = status;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return status;
}
