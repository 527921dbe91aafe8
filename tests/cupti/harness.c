#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/cupti/harness.h"
#include "common/clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct acc {
	unsigned char *data;
	size_t len, cap;
};

struct drainer {
	struct ring_shm *shm;
	struct acc acc[GPU_RING_SLOTS];
	unsigned char *tmp;
	_Atomic int stop;
};

static void drain_once(struct drainer *d)
{
	for (uint32_t i = 0; i < d->shm->nslots && i < GPU_RING_SLOTS; i++) {
		size_t n = ring_read(d->shm, ring_shm_slot(d->shm, i), d->tmp, d->shm->ring_bytes);
		if (!n)
			continue;
		struct acc *a = &d->acc[i];
		if (a->len + n > a->cap) {
			size_t cap = a->cap ? a->cap : 1u << 16;
			while (cap < a->len + n)
				cap *= 2;
			a->data = realloc(a->data, cap);
			if (!a->data)
				abort();
			a->cap = cap;
		}
		memcpy(a->data + a->len, d->tmp, n);
		a->len += n;
	}
}

static void *drain_main(void *p)
{
	struct drainer *d = p;
	while (!atomic_load(&d->stop)) {
		drain_once(d);
		usleep(200);
	}
	return NULL;
}

/* The drained bytes as a view: what view_load makes of a single read. */
static void view_build(struct view *v, struct drainer *d)
{
	memset(v, 0, sizeof(*v));
	v->nslots = GPU_RING_SLOTS;
	v->slot = calloc(GPU_RING_SLOTS, sizeof(*v->slot));
	v->str = calloc(VIEW_MAX_STRINGS, sizeof(*v->str));
	if (!v->slot || !v->str)
		abort();
	for (uint32_t i = 0; i < GPU_RING_SLOTS; i++) {
		struct view_slot *s = &v->slot[i];
		s->index = i;
		s->data = d->acc[i].data;
		s->len = d->acc[i].len;
		s->r = calloc(VIEW_MAX_RECS, sizeof(*s->r));
		if (!s->r)
			abort();
		for (size_t off = 0; off < s->len && s->n < VIEW_MAX_RECS;) {
			const struct ring_rec *h = (const void *)(s->data + off);
			if (h->size < sizeof(*h))
				fail_msg("slot %u: a record of size %u at %zu", i, h->size, off);
			s->r[s->n++] = h;
			if (h->kind == RING_REC_STRING && h->aux < VIEW_MAX_STRINGS)
				v->str[h->aux] = (const char *)(h + 1);
			off += h->size;
		}
		assert_true(s->n < VIEW_MAX_RECS);
	}
}

static void read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	lseek(fd, 0, SEEK_SET);
	for (;;) {
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
}

void gpu_run(struct gpu_run *r, enum gpu_run_kind kind, const char *mode, const char *const *extra)
{
	memset(r, 0, sizeof(*r));
	int shm_fd = -1;
	if (kind == GPU_RUN_RECORDING) {
		r->len = ring_shm_size(GPU_RING_SLOTS, GPU_RING_BYTES);
		shm_fd = memfd_create("gprof-dl-test-ring", 0);
		assert_true(shm_fd >= 0);
		assert_int_equal(ftruncate(shm_fd, (off_t)r->len), 0);
		r->shm = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
		assert_true(r->shm != MAP_FAILED);
		ring_shm_init(r->shm, GPU_RING_SLOTS, GPU_RING_BYTES, (uint32_t)getpid());
	}
	char log_path[] = "/tmp/gprof-dl-fake-cupti-XXXXXX";
	int log_fd = mkstemp(log_path);
	assert_true(log_fd >= 0);
	close(log_fd);
	unlink(log_path); /* the fake creates it when it is loaded */

	char shm_env[128], preload[4096], inject[4096], log_env[128];
	snprintf(shm_env, sizeof(shm_env), "%s=/proc/%d/fd/%d", RING_ENV, (int)getpid(), shm_fd);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", GPDL_TEST_COLLECTOR);
	snprintf(inject, sizeof(inject), "CUDA_INJECTION64_PATH=%s", GPDL_TEST_COLLECTOR);
	snprintf(log_env, sizeof(log_env), "FAKE_CUPTI_LOG=%s", log_path);
	const char *env[32] = {"PATH=/usr/bin:/bin", "LC_ALL=C", log_env};
	int n = 3;
	if (kind != GPU_RUN_BARE) {
		env[n++] = preload;
		env[n++] = inject;
	}
	if (kind == GPU_RUN_RECORDING)
		env[n++] = shm_env;
	for (int i = 0; extra && extra[i] && n < 31; i++)
		env[n++] = extra[i];
	env[n] = NULL;

	struct drainer *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	pthread_t th;
	if (r->shm) {
		d->shm = r->shm;
		d->tmp = malloc(GPU_RING_BYTES);
		assert_non_null(d->tmp);
		assert_int_equal(pthread_create(&th, NULL, drain_main, d), 0);
	}

	int out = memfd_create("out", 0), err = memfd_create("err", 0);
	assert_true(out >= 0 && err >= 0);
	fflush(NULL);
	r->t0 = clock_now_ns();
	r->pid = fork();
	assert_true(r->pid >= 0);
	if (r->pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		char *argv[] = {(char *)"gpu-target", (char *)mode, NULL};
		execve(GPDL_TEST_GPU_TARGET, argv, (char **)env);
		_exit(126);
	}
	assert_int_equal(waitpid(r->pid, &r->status, 0), r->pid);
	r->t1 = clock_now_ns();
	read_all(out, r->out, sizeof(r->out));
	read_all(err, r->err, sizeof(r->err));
	close(out);
	close(err);

	int lf = open(log_path, O_RDONLY | O_CLOEXEC);
	if (lf >= 0) {
		r->loaded = 1;
		read_all(lf, r->log, sizeof(r->log));
		close(lf);
		unlink(log_path);
	}
	if (r->shm) {
		close(shm_fd);
		atomic_store(&d->stop, 1);
		pthread_join(th, NULL);
		drain_once(d); /* what the target wrote after the last pass */
		view_build(&r->v, d);
		free(d->tmp);
	}
	free(d);
}

void gpu_run_free(struct gpu_run *r)
{
	if (r->shm) {
		view_free(&r->v);
		munmap(r->shm, r->len);
	}
	memset(r, 0, sizeof(*r));
}

uint32_t gpu_slot_pid(const struct view_slot *s)
{
	const struct ring_thread *t = view_find(s, RING_REC_THREAD_START, 0);
	return t ? t->pid : 0;
}

size_t gpu_count(const struct gpu_run *r, uint32_t pid, uint16_t kind)
{
	size_t n = 0;
	for (uint32_t i = 0; i < r->v.nslots; i++)
		if (!pid || gpu_slot_pid(&r->v.slot[i]) == pid)
			n += view_count(&r->v.slot[i], kind);
	return n;
}

const void *gpu_nth(const struct gpu_run *r, uint32_t pid, uint16_t kind, size_t nth)
{
	for (uint32_t i = 0; i < r->v.nslots; i++) {
		const struct view_slot *s = &r->v.slot[i];
		if (pid && gpu_slot_pid(s) != pid)
			continue;
		size_t k = view_count(s, kind);
		if (nth < k)
			return view_find(s, kind, nth);
		nth -= k;
	}
	return NULL;
}

size_t gpu_count_activity(const struct gpu_run *r, uint32_t pid)
{
	size_t n = 0;
	for (uint16_t k = RING_REC_GPU_API; k <= RING_REC_GPU_DROPS; k++)
		n += gpu_count(r, pid, k);
	return n;
}

uint64_t gpu_dropped(const struct gpu_run *r)
{
	uint64_t n = atomic_load(&r->shm->no_slot_events);
	for (uint32_t i = 0; i < r->shm->nslots; i++)
		n += atomic_load(&ring_shm_slot(r->shm, i)->dropped);
	return n;
}

int gpu_logged(const struct gpu_run *r, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = r->log; (p = strstr(p, line)); p += n)
		if ((p == r->log || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}
