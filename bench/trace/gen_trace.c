/*
 * gen_trace.c - gpdl-gen-trace [--gpu] OUT N [THREADS]: writes a synthetic
 * trace of exactly N events (see trace_gen.h), for benchmarking the readers
 * of traces. --gpu: GPU work too, as PyTorch on CUDA would record it.
 */
#include "bench/trace/trace_gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gen_parse(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && end != s && !*end && *v <= max && s[0] != '-';
}

int main(int argc, char **argv)
{
	unsigned long long n, threads = 4;
	struct trace_gen_stats st;
	unsigned flags = 0;

	if (argc > 1 && !strcmp(argv[1], "--gpu")) {
		flags |= TRACE_GEN_GPU;
		argv++;
		argc--;
	}
	if (argc < 3 || argc > 4 || !gen_parse(argv[2], UINT64_MAX, &n) ||
	    (argc == 4 && (!gen_parse(argv[3], 256, &threads) || !threads))) {
		fprintf(stderr, "usage: gpdl-gen-trace [--gpu] OUT N [THREADS]   (THREADS 1..256, default 4)\n");
		return 2;
	}
	if (trace_gen_write_flags(argv[1], n, (unsigned)threads, flags, &st) < 0) {
		fprintf(stderr, "gpdl-gen-trace: cannot write '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("%s: %llu events, %llu threads, %llu names, %llu counter samples, %llu bytes (%.2f bytes/event)\n",
	       argv[1], (unsigned long long)st.events, threads, (unsigned long long)st.names,
	       (unsigned long long)st.counters, (unsigned long long)st.bytes,
	       st.events ? (double)st.bytes / (double)st.events : 0.0);
	if (flags & TRACE_GEN_GPU)
		printf("%s: %llu of the events on 2 GPU streams\n", argv[1],
		       (unsigned long long)st.gpu_events);
	return 0;
}
