/*
 * settings.c: the module's settings (gpusort.*) except the sort node's,
 * which sort_plan.c defines: their variables, which the rest of src/ reads,
 * and their definitions, made from _PG_init.
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "gpusort_pg.h"
#include "server.h"

int			gpusort_device = GPUSORT_DEVICE_AUTO;

/*
 * The crossover measured in SQL on an H100 host: from about 10,000 elements
 * the GPU path, copies included, beats the CPU radix sort (docs/performance.md,
 * "The crossover").
 */
int			gpusort_gpu_min_elements = 10000;
int			gpusort_algorithm = GS_ALGO_AUTO;
int			gpusort_device_id = -1;
int			gpusort_max_device_memory = 0;
int			gpusort_server_memory = 0;
int			gpusort_transfer_area = 256;
int			gpusort_server_streams = 4;
int			gpusort_server_job_timeout = 60000;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUSORT_DEVICE_AUTO, false},
	{"gpu", GPUSORT_DEVICE_GPU, false},
	{"cpu", GPUSORT_DEVICE_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry algorithm_options[] = {
	{"auto", GS_ALGO_AUTO, false},
	{"radix", GS_ALGO_RADIX, false},
	{"merge", GS_ALGO_MERGE, false},
	{"bitonic", GS_ALGO_BITONIC, false},
	{"quick", GS_ALGO_QUICK, false},
	{NULL, 0, false}
};

void
gpusort_define_settings(void)
{
	DefineCustomEnumVariable("gpusort.device",
							 "Sets where gpusort sorts: auto, gpu or cpu.",
							 "auto uses the GPU when one is usable and the array has at least "
							 "gpusort.gpu_min_elements elements, else the CPU; gpu always uses "
							 "the GPU and errors when none is usable; cpu never uses the GPU.",
							 &gpusort_device,
							 GPUSORT_DEVICE_AUTO,
							 device_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.gpu_min_elements",
							"Sets the smallest number of elements that gpusort.device = auto sorts on the GPU.",
							"Smaller sorts run on the CPU, where they finish before the copies to "
							"and from the GPU would.",
							&gpusort_gpu_min_elements,
							10000, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("gpusort.algorithm",
							 "Sets the GPU sorting algorithm: auto, radix, merge, bitonic or quick.",
							 "auto chooses by element type and size.  The CPU always uses its "
							 "radix sort.",
							 &gpusort_algorithm,
							 GS_ALGO_AUTO,
							 algorithm_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.device_id",
							"Sets the GPU gpusort uses; -1 spreads backends and parallel workers over all GPUs.",
							NULL,
							&gpusort_device_id,
							-1, -1, 1023,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.max_device_memory",
							"Sets the most GPU memory one sort may use.",
							"0 means no limit.  A sort that needs more runs on the CPU under gpusort.device = auto "
							"and fails under gpusort.device = gpu.",
							&gpusort_max_device_memory,
							0, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.server_memory",
							"Sets the GPU memory the GPU server may give to sorts, per GPU.",
							"0 means 80% of each GPU's memory.  Jobs that do not fit wait in "
							"the queue.  Only used when gpusort is in shared_preload_libraries.",
							&gpusort_server_memory,
							0, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.server_job_timeout",
							"Sets how long a job may be busy on its GPU before the GPU server cancels it.",
							"A job busy longer than this is cancelled on its own and stops at its next "
							"chunk or pass; under gpusort.device = auto its sort runs on the CPU, and that "
							"session's sorts of that size run on the CPU for a minute.  Only a job that does "
							"not stop within 5 s of its cancel (a hung GPU) ends the GPU process.  Time a job "
							"waits for its backend does not count.  0 means no limit.  Only used when gpusort "
							"is in shared_preload_libraries.",
							&gpusort_server_job_timeout,
							60000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	/* The GPU server's sizes are fixed at its start, so they exist only then. */
	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomIntVariable("gpusort.transfer_area",
								"Sets the size of the GPU server's pinned transfer area in shared memory.",
								"Sorts stream their data through it in chunks; larger arrays than "
								"the area take several rounds.",
								&gpusort_transfer_area,
								256, 64, 65536,
								PGC_POSTMASTER, GUC_UNIT_MB,
								NULL, NULL, NULL);

		DefineCustomIntVariable("gpusort.server_streams",
								"Sets how many sorts the GPU server runs at once on each GPU.",
								NULL,
								&gpusort_server_streams,
								4, 1, 64,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);
	}
}
