/*
 * module.c: the module's entry point.  _PG_init defines the settings, sets
 * up the GPU server when gpusort is preloaded (server mode: the postmaster
 * starts the server, and backends never load CUDA), and registers the sort
 * node.  It never touches the CUDA runtime: the postmaster must not hold a
 * context.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "gpusort_pg.h"
#include "server.h"
#include "sort_node.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	gpusort_define_settings();
	if (process_shared_preload_libraries_in_progress)
		gpusort_server_register();
	gpusort_sort_node_init();

	MarkGUCPrefixReserved("gpusort");
}
