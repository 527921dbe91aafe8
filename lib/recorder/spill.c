/*
 * spill.c - where ring records wait when the launcher cannot convert them
 * as fast as the program writes them (a new name every event costs the
 * conversion a string and a desc of the file besides the event).
 *
 * A slot whose ring backs up (SPILL_BACKLOG pending) is copied out raw,
 * whole records, into chunks of ring_bytes, at the speed of a copy; drain.c
 * converts the chunks, oldest first, when the rings leave it time, and
 * everything before a thread or a process counts as ended (so the order
 * the trace sees is the order a slot's records were written in). Chunks
 * live in memory up to a cap; past it, the newest full one goes to a file
 * beside the output (unlinked: nothing is left behind) and comes back when
 * its turn comes. Only when neither has room does a ring wait, and its
 * thread drop, counted as it always was.
 *
 * The copy is also the spiller's, a thread of its own while a run lasts:
 * a ring three quarters full wakes it (half full wakes the converting
 * thread, ring.h) and it copies out the rings that backed up, so that on a
 * machine whose cores the program keeps busy, a ring is emptied when the
 * program fills it, not when the converting thread next gets a CPU. The two share the
 * spill under its lock (struct spill: mu), which neither holds while
 * records are converted.
 */
#include "lib/recorder/recorder_int.h"

#include "common/error.h"
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPILL_MEM_CAP (256ull << 20) /* bytes of chunks in memory before the file */
#define SPILL_POOL_MAX 8u            /* buffers kept for reuse */

void rec_spill_init(struct recorder *r)
{
	struct spill *s = &r->spill;
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->fd = -1;
	s->mem_cap = r->opts.spill_memory ? r->opts.spill_memory : SPILL_MEM_CAP;
	if (s->mem_cap < 4 * r->opts.ring_bytes)
		s->mem_cap = 4 * r->opts.ring_bytes;
}

/* A buffer for a chunk: a free one, or a new one while memory allows
 * (always, when force: a chunk read back from the file must have one). */
static unsigned char *buf_get(struct recorder *r, int force)
{
	struct spill *s = &r->spill;
	if (s->npool)
		return s->pool[--s->npool];
	if (!force && s->mem_bytes + r->opts.ring_bytes > s->mem_cap)
		return NULL;
	unsigned char *b = malloc(r->opts.ring_bytes);
	if (b)
		s->mem_bytes += r->opts.ring_bytes;
	return b;
}

static void buf_put(struct recorder *r, unsigned char *b)
{
	struct spill *s = &r->spill;
	if (s->npool < SPILL_POOL_MAX && s->mem_bytes <= s->mem_cap) {
		s->pool[s->npool++] = b;
		return;
	}
	free(b);
	s->mem_bytes -= r->opts.ring_bytes;
}

/* The spill file, in the output's directory (where the trace has room),
 * unlinked from the start; -1 when none can be had. */
static int spill_file(struct recorder *r)
{
	struct spill *s = &r->spill;
	if (s->fd != -1)
		return s->fd >= 0 ? s->fd : -1;
	size_t len = strlen(r->out_path);
	char *dir = xmalloc(len + 2);
	memcpy(dir, r->out_path, len + 1);
	char *slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = '\0';
	int fd = outfile_scratch(dir);
	free(dir);
	s->fd = fd >= 0 ? fd : -2;
	return fd;
}

/* Chunk c, in memory and untouched by the conversion, goes to the file and
 * its buffer to the pool. 0, or -1 when it cannot (it stays). */
static int chunk_evict(struct recorder *r, struct spill_chunk *c)
{
	struct spill *s = &r->spill;
	int fd = spill_file(r);
	if (fd < 0 || !c->data || c->done || c->scanned)
		return -1;
	uint64_t nrec = 0;
	for (uint32_t off = 0; off < c->len; off += ((const struct ring_rec *)(const void *)(c->data + off))->size)
		nrec++;
	for (uint32_t w = 0; w < c->len;) {
		ssize_t k = pwrite(fd, c->data + w, c->len - w, (off_t)(s->file_end + w));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		w += (uint32_t)k;
	}
	c->file_off = s->file_end;
	c->nrec = nrec;
	s->file_end += c->len;
	s->file_bytes += c->len;
	buf_put(r, c->data);
	c->data = NULL;
	return 0;
}

/* A new, empty chunk at the end of slot i's spill; NULL when there is no
 * room in memory and the slot's newest chunk cannot go to the file. */
static struct spill_chunk *chunk_new(struct recorder *r, uint32_t i, uint32_t pid)
{
	struct slot_state *st = &r->slots[i];
	unsigned char *b = buf_get(r, 0);
	/* memory is full: the newest chunk of a slot that nothing was
	 * converted of (this slot's first) goes to the file */
	for (uint32_t k = 0; !b && k < r->opts.nslots; k++) {
		struct spill_chunk *t = r->slots[(i + k) % r->opts.nslots].spill_tail;
		if (t && chunk_evict(r, t) == 0)
			b = buf_get(r, 0);
		else if (r->spill.fd == -2)
			break; /* no file to be had */
	}
	if (!b)
		return NULL;
	struct spill_chunk *c = xcalloc(1, sizeof(*c));
	c->data = b;
	c->pid = pid;
	if (st->spill_tail)
		st->spill_tail->next = c;
	else {
		st->spill_head = c;
		r->spill.slots++;
	}
	st->spill_tail = c;
	return c;
}

/* What slot i's ring holds joins its spill, two rings' worth at most (a
 * thread writing on as fast must not keep the launcher from the rest).
 * Returns the bytes taken. */
uint64_t rec_spill_append(struct recorder *r, uint32_t i)
{
	struct spill *s = &r->spill;
	struct ring_slot *slot = ring_shm_slot(r->shm, i);
	struct slot_state *st = &r->slots[i];
	uint64_t cap = r->opts.ring_bytes, total = 0;
	uint32_t pid = slot->pid;

	while (total < 2 * cap && ring_pending(slot) > 0) {
		struct spill_chunk *c = st->spill_tail;
		size_t n = 0;
		if (c && c->data && c->pid == pid)
			n = ring_read(r->shm, slot, c->data + c->len, cap - c->len);
		if (!n) {
			if (!ring_pending(slot))
				break;
			if (c && c->data && c->pid == pid && c->len == 0)
				break; /* cannot happen: a ring's record fits in an empty chunk */
			if (!(c = chunk_new(r, i, pid)))
				break; /* no room anywhere: the ring waits */
			continue;
		}
		c->len += (uint32_t)n;
		st->spill_bytes += n;
		s->pending += n;
		s->total_bytes += n;
		total += n;
	}
	if (s->pending > s->peak_bytes)
		s->peak_bytes = s->pending;
	return total;
}

/* The rings that backed up join the spill (a copy: no record is converted,
 * so no order changes), all but slot except's and those being finished. */
uint64_t rec_spill_rings(struct recorder *r, uint32_t except)
{
	uint64_t total = 0;
	uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
	for (uint32_t i = 0; i < used && i < r->shm->nslots; i++) {
		struct ring_slot *s = ring_shm_slot(r->shm, i);
		if (i == except || r->slots[i].finishing || ring_pending(s) < SPILL_BACKLOG(r))
			continue;
		uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
		if (state == RING_SLOT_ACTIVE || state == RING_SLOT_EXITED)
			total += rec_spill_append(r, i);
	}
	return total;
}

#define SPILLER_WAIT_NS 5000000ull /* a look at the rings at least this often */
#define SPILLER_FULL_NS 1000000ull /* the pause when the spill took nothing */

/* The spiller: woken by a ring three quarters full (the converting thread,
 * woken at half, did not come), or every SPILLER_WAIT_NS. */
static void *spiller_main(void *arg)
{
	struct recorder *r = arg;
	while (!atomic_load_explicit(&r->spill.spiller_stop, memory_order_acquire)) {
		ring_wait_spiller(r->shm, SPILLER_WAIT_NS);
		rec_spill_lock(r);
		uint64_t took = rec_spill_rings(r, UINT32_MAX);
		rec_spill_unlock(r);
		if (!took && ring_any_pending(r->shm, RING_SPILLER_WAKE(r->shm))) {
			/* no room for it: that ring would end the wait at once */
			struct timespec ts = {0, (long)SPILLER_FULL_NS};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int rec_spiller_start(struct recorder *r)
{
	struct spill *s = &r->spill;
	if (s->spiller_on)
		return 0;
	/* the launcher's signals stay the main thread's */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&s->spiller_stop, 0);
	int rc = pthread_create(&s->spiller, NULL, spiller_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	s->spiller_on = 1;
	return 0;
}

void rec_spiller_stop(struct recorder *r)
{
	struct spill *s = &r->spill;
	if (!s->spiller_on)
		return;
	atomic_store_explicit(&s->spiller_stop, 1, memory_order_release);
	ring_wake_spiller(r->shm);
	pthread_join(s->spiller, NULL);
	s->spiller_on = 0;
}

/* The oldest chunk of slot i, in memory; NULL when none. A chunk that
 * cannot be read back from the file is lost: its records are counted as
 * the thread's drops (finish_slot() writes them). */
struct spill_chunk *rec_spill_head(struct recorder *r, uint32_t i)
{
	struct slot_state *st = &r->slots[i];
	struct spill_chunk *c;
	while ((c = st->spill_head) && !c->data) {
		unsigned char *b = buf_get(r, 1);
		uint32_t got = 0;
		while (b && got < c->len) {
			ssize_t k = pread(r->spill.fd, b + got, c->len - got, (off_t)(c->file_off + got));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			got += (uint32_t)k;
		}
		if (b && got == c->len) {
			c->data = b;
			break;
		}
		if (b)
			buf_put(r, b);
		st->spill_lost += c->nrec;
		r->spill.lost_records += c->nrec;
		c->done = c->len;
		rec_spill_consumed(r, i, 0);
	}
	return c;
}

/* bytes more of slot i's oldest chunk were converted (its done already
 * says so): the chunk is freed once all of it was. */
void rec_spill_consumed(struct recorder *r, uint32_t i, uint32_t bytes)
{
	struct spill *s = &r->spill;
	struct slot_state *st = &r->slots[i];
	struct spill_chunk *c = st->spill_head;
	st->spill_bytes -= bytes;
	s->pending -= bytes;
	if (!c || c->done < c->len)
		return;
	if (!c->data) { /* lost in the file */
		st->spill_bytes -= c->len;
		s->pending -= c->len;
	} else {
		buf_put(r, c->data);
	}
	st->spill_head = c->next;
	if (!st->spill_head) {
		st->spill_tail = NULL;
		s->slots--;
	}
	free(c);
	if (!s->pending && s->fd >= 0 && s->file_end) {
		/* nothing waits: the file starts over */
		if (ftruncate(s->fd, 0) == 0)
			s->file_end = 0;
	}
}

void rec_spill_free(struct recorder *r)
{
	struct spill *s = &r->spill;
	rec_spiller_stop(r);
	for (uint32_t i = 0; r->slots && i < r->opts.nslots; i++) {
		struct spill_chunk *c = r->slots[i].spill_head, *next;
		for (; c; c = next) {
			next = c->next;
			free(c->data);
			free(c);
		}
		r->slots[i].spill_head = r->slots[i].spill_tail = NULL;
	}
	for (uint32_t k = 0; k < s->npool; k++)
		free(s->pool[k]);
	s->npool = 0;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	pthread_mutex_destroy(&s->mu);
}
