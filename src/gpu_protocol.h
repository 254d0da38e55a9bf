/*
 * gpu_protocol.h: what the GPU server (server.c) and the GPU process it
 * forks (gpu_process.c) say to each other through their two pipes, and
 * nothing else: the commands the server writes, the messages it reads back,
 * the GPU process's exit codes and the call that starts it.  What both see
 * in shared memory (the job slots, the transfer area) is in server.h; each
 * process's own state stays static to its file.
 */
#ifndef GPUSORT_GPU_PROTOCOL_H
#define GPUSORT_GPU_PROTOCOL_H

#include <sys/types.h>

/* The commands the server writes to the GPU process's command pipe. */
typedef enum GpusortCommandKind
{
	GPUSORT_CMD_RUN,			/* worker: run the job of slot (seq) */
	GPUSORT_CMD_EXIT_BROKEN		/* end as for a broken context (test builds' injection) */
} GpusortCommandKind;

typedef struct GpusortCommand
{
	int32		kind;
	int32		worker;
	int32		slot;
	int32		pad;
	uint64		seq;
} GpusortCommand;

/* The messages the GPU process writes to its message pipe, which the server reads. */
typedef enum GpusortMessageKind
{
	GPUSORT_MSG_WAKE,			/* set the latch of the slot's backend */
	GPUSORT_MSG_FINISHED,		/* the worker is done with the slot's job */
	GPUSORT_MSG_READY,			/* the devices are ready (gpu_report) */
	GPUSORT_MSG_NO_GPU			/* no GPU is usable (gpu_report.reason); the process ends */
} GpusortMessageKind;

typedef struct GpusortMessage
{
	int32		kind;
	int32		worker;
	int32		slot;
	int32		status;			/* FINISHED: the job's gs_status */
	uint64		seq;
} GpusortMessage;

/* The GPU process's exit codes, beside death by a signal. */
#define GPUSORT_GPU_EXIT_BROKEN		70	/* a CUDA error left a context unusable */
#define GPUSORT_GPU_EXIT_ORPHANED	71	/* the server is gone */
#define GPUSORT_GPU_EXIT_EXIT		72	/* something in it called exit() */

/*
 * Forks the GPU process (gpu_process.c); returns its pid with the server's
 * ends of the pipes, or -1 with errno set.
 */
extern pid_t gpusort_gpu_process_start(int *command_fd, int *message_fd);

#endif							/* GPUSORT_GPU_PROTOCOL_H */
