/*
 * gprof-dl-api.h - the collector's C interface for language bindings (the
 * Python package's extension and its torch RecordFunction observer), as an
 * alternative to NVTX where NVTX cannot say what is needed: ranges decided after
 * the fact (a training step is known to be one only when it ends), operator
 * sequence numbers and input shapes, samples per step, and the recording window.
 *
 * The collector (preloaded by `gprof-dl run`) exports one symbol:
 *
 *     const struct gprof_dl_api *gprof_dl_api(uint32_t version);
 *
 * Find it with dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL). It returns NULL when
 * the collector is not attached to a launcher (outside `gprof-dl run`), or when
 * it does not know VERSION; a binding then does nothing at all. Calls never
 * block, allocate on the range path, or change errno; a record that does not fit
 * its ring is dropped and counted, as with NVTX.
 *
 * Ranges made through this interface live in the gprof-dl NVTX domain
 * (GPROF_DL_NVTX_DOMAIN) and share the calling thread's push stack with that
 * domain's NVTX ranges: nvtxDomainRangePop on the gprof-dl domain and pop()
 * below pop the same stack.
 */
#ifndef GPROF_DL_API_H
#define GPROF_DL_API_H

#include <stddef.h>
#include <stdint.h>

#define GPROF_DL_API_SYMBOL "gprof_dl_api"
#define GPROF_DL_API_VERSION 1u

/* torch_nvtx(1 | GPROF_DL_TORCH_NVTX_NO_COMM): see torch_nvtx below. */
#define GPROF_DL_TORCH_NVTX_NO_COMM 2

/* What the launcher asked for (gprof-dl run options), as options() reports it. */
enum gprof_dl_option {
	GPROF_DL_OPT_TIMER_ONLY = 1u << 0,    /* --timer-only: steps and Dataloader only */
	GPROF_DL_OPT_RECORD_SHAPES = 1u << 1, /* --record-shapes */
	GPROF_DL_OPT_STEP_WINDOW = 1u << 2,   /* --steps A:B was given */
	GPROF_DL_OPT_TIME_WINDOW = 1u << 3,   /* --delay or --duration was given */
	GPROF_DL_OPT_PAUSED = 1u << 4,        /* --paused: no detail before start() */
	GPROF_DL_OPT_NO_PYTHON = 1u << 5,     /* --no-python: the Python hooks stay out */
	GPROF_DL_OPT_PROFILE_MEMORY = 1u << 6, /* --profile-memory: report allocations (memory()) */
};

/* A collective or point-to-point call, for comm() (appended to the
 * interface: present when size reaches it). Strings are ids from string(). */
struct gprof_dl_comm {
	uint32_t name;       /* as the backend names its work: "gloo:all_reduce" */
	uint32_t pg;         /* the process group's name; 0: unknown */
	uint32_t dtype;      /* the element type, "float"; 0: unknown */
	uint32_t group_size; /* 0: unknown */
	int32_t peer;        /* send/recv: the other rank, its global rank; -1: none */
	uint32_t pad;
	int64_t seq;         /* the call's number in its group; < 0: unknown */
	uint64_t bytes;      /* the input tensors' size; 0: unknown */
	uint64_t start_ns, end_ns; /* the clock of now(): enqueue or start to completion */
};

/* An allocation or a free an allocator made, for memory() (appended to the
 * interface: present when size reaches it). */
struct gprof_dl_memory {
	uint64_t address;         /* the block's address */
	int64_t bytes;            /* > 0: allocated; < 0: freed */
	uint64_t total_allocated; /* bytes in use on the device after it, as the allocator counts */
	uint64_t total_reserved;  /* bytes the allocator holds, used or not; 0: unknown */
	int32_t device;           /* -1: host memory; else the GPU's index */
	uint32_t pad;
};

struct gprof_dl_api {
	uint32_t version; /* GPROF_DL_API_VERSION */
	uint32_t size;    /* sizeof(struct gprof_dl_api) of the collector */

	/* The trace clock (CLOCK_MONOTONIC, ns). */
	uint64_t (*now)(void);
	/* Interns a name (UTF-8, cut past 1024 bytes); its id (>= 1), valid in every
	 * thread and process of the run. 0 when it could not be recorded: a range
	 * given name 0 is dropped and counted. Costs a hash of the bytes; cache ids
	 * of names you use often. */
	uint32_t (*string)(const char *s, size_t len);

	/* A range on this thread, of the given category (enum gprof_dl_category of
	 * gprof-dl-nvtx.h), opened now; closed by pop(). */
	void (*push)(uint32_t category, uint32_t name);
	/* An Operator range with torch's sequence number (seq < 0: none) and its
	 * input shapes as a string id ("[[32, 64], [64]]"; 0: none). */
	void (*op_push)(uint32_t name, int64_t seq, uint32_t shapes);
	/* Closes the innermost range of the gprof-dl domain on this thread. */
	void (*pop)(void);
	/* A complete range on this thread with given times: how a ProfileStep is
	 * recorded once the step is known to have ended. samples: the step's
	 * samples (num_samples), 0 unknown. */
	void (*range)(uint32_t category, uint32_t name, uint64_t start_ns, uint64_t end_ns,
		      uint64_t samples);
	/* An instant of the given category on this thread. */
	void (*mark)(uint32_t category, uint32_t name);

	/* The recording window. Full detail (every category but ProfileStep and
	 * Dataloader, and every range outside the gprof-dl domain) is recorded
	 * only while *detail is non-zero: not under --timer-only, not while paused,
	 * inside --steps A:B and inside --delay/--duration. Ranges opened while
	 * detail is off are not recorded, and neither are their pops, whenever the
	 * window changes in between. Read *detail freely; it changes only through
	 * the calls below and the clock. */
	const volatile int *detail;
	/* Step N (0-based) begins: moves the --steps window. The collector also
	 * calls this itself for every ProfileStep range pushed through NVTX in the
	 * gprof-dl domain, numbering those 0, 1, 2, ... per process, so C programs
	 * get the window without this interface (gprof-dl-nvtx.h). Ranges pushed
	 * through push() never count as steps. */
	void (*step)(uint64_t n);
	/* gprof_dl.start() / gprof_dl.stop(): detail on / off from now. */
	void (*start)(void);
	void (*stop)(void);
	/* enum gprof_dl_option mask. */
	uint32_t (*options)(void);

	/* on != 0: NVTX ranges of the default domain whose message has torch's
	 * emit_nvtx form ("NAME, seq = N, op_id = M, sizes = [...]", any of the
	 * parts after NAME optional and in any order) are recorded as Operator
	 * ranges named NAME, with N as sequence number and the sizes as shapes.
	 * Every default-domain push is then read so (ASCII, wide and registered
	 * messages); one with none of the parts is an Operator named by all of
	 * its message. NAME is interned by content (op_id makes each message
	 * unique); NAME and the shapes are cut past 1024 bytes. Process-wide.
	 * on with GPROF_DL_TORCH_NVTX_NO_COMM: a push whose NAME is a
	 * communication call (trace_name_comm_call: "gloo:all_reduce") is left
	 * out as a push made while detail is off is, its pop too: the binding
	 * records those calls through comm(). Every collector with comm()
	 * honours the bit; older ones read it as on. */
	void (*torch_nvtx)(int on);

	/* Members added after the first release: a binding checks that size
	 * covers one before it calls it (GPROF_DL_API_HAS(api, comm)). */

	/* A Communication event on this thread, complete: recorded while
	 * *detail is non-zero, like operators. */
	void (*comm)(const struct gprof_dl_comm *c);
	/* This process is rank RANK of WORLD_SIZE (local_rank on its host, -1
	 * unknown), with BACKEND (a string id, 0 unknown): what
	 * torch.distributed.init_process_group learnt, for a process that the
	 * environment did not name (mp.spawn). Overrides the environment's. */
	void (*rank)(int32_t rank, int32_t local_rank, int32_t world_size, uint32_t backend);
	/* A Memory event on this thread, now: an allocation or a free that the
	 * framework's allocator reported (PyTorch's, under --profile-memory:
	 * GPROF_DL_OPT_PROFILE_MEMORY). Recorded while *detail is non-zero, like
	 * operators, so that it falls inside the operator that made it. */
	void (*memory)(const struct gprof_dl_memory *m);
};

#define GPROF_DL_API_HAS(api, member)                                                        \
	((api)->size >= offsetof(struct gprof_dl_api, member) + sizeof((api)->member))

typedef const struct gprof_dl_api *(*gprof_dl_api_fn)(uint32_t version);

#endif
