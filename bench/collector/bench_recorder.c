/*
 * bench-recorder - what the launcher spends on each record it drains.
 *
 *     bench-recorder [EVENTS [plain|distinct]]
 *
 * Fills a slot's ring as the collector would, with EVENTS ranges of one
 * name (plain) or each of a new name (distinct: a STRING record and its
 * range, "range N"), and lets the recorder drain them into a trace, ring by
 * ring. Times the drains (recorder_poll) and the end (recorder_finish) in
 * this thread's CPU time, which other programs on the machine do not add
 * to, and prints the best of three as "<ns> ns per event drained". The
 * target runs at full speed without drops only while this is less than
 * what the target spends per event (bench-nvtx).
 */
#include "lib/recorder/recorder.h"
#include "lib/ring/ring.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RING_BYTES (1u << 20)

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void put(struct ring_shm *shm, struct ring_slot *s, const void *rec)
{
	if (ring_write(shm, s, rec) != 0) {
		fprintf(stderr, "bench-recorder: ring full\n");
		exit(1);
	}
}

static void put_string(struct ring_shm *shm, struct ring_slot *s, uint32_t id, const char *text)
{
	union {
		struct ring_rec h;
		unsigned char b[64];
	} r;
	size_t n = strlen(text) + 1;
	memset(&r, 0, sizeof(r));
	r.h.kind = RING_REC_STRING;
	r.h.size = (uint16_t)ring_rec_align(sizeof(r.h) + n);
	r.h.aux = id;
	memcpy(r.b + sizeof(r.h), text, n);
	put(shm, s, &r);
}

/* One run: the CPU ns per event of the drains and the end. */
static double run(const char *path, long events, int distinct)
{
	struct recorder_opts o = {path, 1, 4, RING_BYTES, 1000000000ull, NULL, 0};
	struct recorder *r = recorder_create(&o);
	uint32_t pid = (uint32_t)getpid();
	if (!r || recorder_begin(r, (pid_t)pid, 0, NULL, 0) != 0) {
		fprintf(stderr, "bench-recorder: cannot start a recorder\n");
		exit(1);
	}
	int fd = open(recorder_shm_env(r), O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror("bench-recorder: the ring");
		exit(1);
	}
	struct ring_shm *shm = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (shm == MAP_FAILED) {
		perror("bench-recorder: mmap");
		exit(1);
	}
	struct ring_slot *s = ring_slot_claim(shm, pid, pid);
	uint64_t t = 1000;
	put_string(shm, s, 1, "bench");
	struct ring_process p = {{RING_REC_PROCESS_START, sizeof(p), 0}, t, pid, 1, 1, 0};
	struct ring_thread th = {{RING_REC_THREAD_START, sizeof(th), 0}, t, pid, pid};
	put(shm, s, &p);
	put(shm, s, &th);
	double spent = 0;
	uint32_t next_id = 2;
	for (long i = 0; i < events;) {
		/* a ring's worth, less room for the largest pair */
		while (i < events && ring_space(shm, s) >= 128) {
			uint32_t name = 1;
			if (distinct) {
				char text[32];
				snprintf(text, sizeof(text), "range %ld", i);
				name = next_id++;
				put_string(shm, s, name, text);
			}
			struct ring_range x = {{RING_REC_RANGE, sizeof(x), 0}, t, t + 50, name, 0, 0, 0};
			put(shm, s, &x);
			t += 100;
			i++;
		}
		double t0 = cpu_ns();
		recorder_poll(r);
		spent += cpu_ns() - t0;
	}
	struct recorder_stats stats;
	double t0 = cpu_ns();
	int rc = recorder_finish(r, &stats);
	spent += cpu_ns() - t0;
	recorder_destroy(r);
	munmap(shm, (size_t)st.st_size);
	unlink(path);
	if (rc != 0) {
		fprintf(stderr, "bench-recorder: the trace was not written\n");
		exit(1);
	}
	return spent / (double)events;
}

int main(int argc, char **argv)
{
	long events = argc > 1 ? atol(argv[1]) : 2000000;
	const char *mode = argc > 2 ? argv[2] : "plain";
	int distinct = !strcmp(mode, "distinct");
	if (events <= 0 || (!distinct && strcmp(mode, "plain") != 0)) {
		fprintf(stderr, "usage: bench-recorder [EVENTS [plain|distinct]]\n");
		return 2;
	}
	char dir[] = "/tmp/bench-recorder-XXXXXX", path[sizeof(dir) + 16];
	if (!mkdtemp(dir)) {
		perror("bench-recorder: mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/r.gpdl", dir);
	double best = 0;
	for (int rep = 0; rep < 3; rep++) {
		double ns = run(path, events, distinct);
		if (rep == 0 || ns < best)
			best = ns;
	}
	rmdir(dir);
	printf("%.2f ns per event drained (best of 3 x %ld, %s)\n", best, events, mode);
	return 0;
}
