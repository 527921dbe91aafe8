/*
 * outfile.c - an output written whole or not at all (outfile.h).
 */
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OUTFILE_SLOTS 1024
#define OUTFILE_NAME_KEEP 200 /* bytes of NAME kept in ".NAME.gpdl-tmp.XXXXXX" */

/* The temporary files to remove on SIGINT, SIGTERM, SIGHUP. A slot is set
 * and cleared with the signals blocked, so the handler of this thread never
 * sees one half made. */
static char *volatile cleanup[OUTFILE_SLOTS];
static volatile sig_atomic_t handlers_set;
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void cleanup_handler(int sig)
{
	for (int i = 0; i < OUTFILE_SLOTS; i++) {
		const char *p = cleanup[i];
		if (p)
			unlink(p);
	}
	signal(sig, SIG_DFL);
	raise(sig); /* delivered once the handler returns: the exit status is the signal's */
}

/* Our handler where the disposition is the default one: a program that
 * handles or ignores a signal (the recorder forwards them to its target)
 * keeps doing so. */
static void set_handlers(void)
{
	if (handlers_set)
		return;
	handlers_set = 1;
	for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++) {
		struct sigaction old, sa;
		if (sigaction(cleanup_signals[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = cleanup_handler;
		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); k++)
			sigaddset(&sa.sa_mask, cleanup_signals[k]);
		sigaction(cleanup_signals[i], &sa, NULL);
	}
}

static void block_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

int outfile_remember(const char *path)
{
	char *copy = strdup(path);
	sigset_t old;
	int slot = -1;

	if (!copy)
		return -1;
	set_handlers();
	block_signals(&old);
	for (int i = 0; i < OUTFILE_SLOTS && slot < 0; i++)
		if (!cleanup[i]) {
			cleanup[i] = copy;
			slot = i;
		}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (slot < 0)
		free(copy);
	return slot;
}

void outfile_forget(int slot)
{
	sigset_t old;
	char *p;

	if (slot < 0 || slot >= OUTFILE_SLOTS)
		return;
	block_signals(&old);
	p = cleanup[slot];
	cleanup[slot] = NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(p);
}

char *outfile_tmp_name(const char *final)
{
	const char *slash = strrchr(final, '/');
	size_t dirlen = slash ? (size_t)(slash - final) + 1 : 0;
	const char *base = final + dirlen;
	size_t blen = strlen(base);
	char *t;

	if (blen > OUTFILE_NAME_KEEP)
		blen = OUTFILE_NAME_KEEP;
	t = malloc(dirlen + blen + 32);
	if (!t)
		return NULL;
	memcpy(t, final, dirlen);
	t[dirlen] = '.';
	memcpy(t + dirlen + 1, base, blen);
	strcpy(t + dirlen + 1 + blen, ".gpdl-tmp.XXXXXX");
	return t;
}

/* The XXXXXX of a temporary name made random. */
static void randomize(char *name)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned counter;
	unsigned char r[6];
	char *x = name + strlen(name) - 6;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t v = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^ ++counter;
		for (int i = 0; i < 6; i++, v >>= 8)
			r[i] = (unsigned char)v;
	}
	for (int i = 0; i < 6; i++)
		x[i] = set[r[i] % (sizeof(set) - 1)];
}

#define SAY_KEEP 120 /* bytes of a long name kept at each end in a message */

/* The message fmt of path and why into err: a long name cut in its middle,
 * so that the reason after it always fits. */
static void say(char *err, size_t errlen, const char *fmt, const char *path, const char *why)
{
	char cut[2 * SAY_KEEP + 4];
	size_t len = strlen(path);

	if (!err || !errlen)
		return;
	if (len > 2 * SAY_KEEP + 3) {
		memcpy(cut, path, SAY_KEEP);
		memcpy(cut + SAY_KEEP, "...", 3);
		memcpy(cut + SAY_KEEP + 3, path + len - SAY_KEEP, SAY_KEEP + 1);
		path = cut;
	}
	snprintf(err, errlen, fmt, path, why);
}

static void outfile_clear(struct outfile *o)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->slot = -1;
}

int outfile_open(struct outfile *o, const char *path, unsigned flags, mode_t mode, char *err,
		 size_t errlen)
{
	struct stat st, lst;
	int e;

	outfile_clear(o);
	if (!*path) {
		say(err, errlen, "%s%s", "empty output name", "");
		errno = ENOENT;
		return -1;
	}
	int exists = lstat(path, &lst) == 0;
	if (!exists && errno != ENOENT) {
		/* a name too long, a folder that is not one, no permission:
		 * said now, before anything is written */
		e = errno;
		say(err, errlen, "cannot create '%s': %s", path, strerror(e));
		errno = e;
		return -1;
	}
	int target = exists && stat(path, &st) == 0; /* what a link points to */
	if (target && S_ISDIR(st.st_mode)) {
		say(err, errlen, "'%s' is a directory%s", path, "");
		errno = EISDIR;
		return -1;
	}
	o->path = strdup(path);
	if (!o->path) {
		say(err, errlen, "cannot create '%s': %s", path, strerror(ENOMEM));
		errno = ENOMEM;
		return -1;
	}
	o->force = !!(flags & OUTFILE_FORCE);
	if (target && !S_ISREG(st.st_mode)) {
		/* a pipe, a terminal, /dev/null: written in place, nothing lost */
		o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (o->fd < 0)
			goto fail;
		return 0;
	}
	if (exists && !o->force) {
		say(err, errlen, "'%s' exists; use --force to overwrite it, or -o to choose another name%s",
		    path, "");
		free(o->path);
		outfile_clear(o);
		errno = EEXIST;
		return -1;
	}
	o->tmp = outfile_tmp_name(path);
	if (!o->tmp) {
		errno = ENOMEM;
		goto fail;
	}
	for (int tries = 0; tries < 100; tries++) {
		randomize(o->tmp);
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	if (o->fd < 0)
		goto fail;
	o->slot = outfile_remember(o->tmp);
	return 0;
fail:
	e = errno;
	say(err, errlen, "cannot create '%s': %s", path, strerror(e));
	free(o->tmp);
	free(o->path);
	outfile_clear(o);
	errno = e;
	return -1;
}

FILE *outfile_fdopen(struct outfile *o)
{
	o->f = fdopen(o->fd, "w");
	return o->f;
}

int outfile_close(struct outfile *o, char *err, size_t errlen)
{
	int e = 0;

	if (o->fd < 0)
		return 0;
	if (o->f) {
		/* the stream closes fd: a copy stays for the fsync */
		int keep = o->tmp ? dup(o->fd) : -1;
		errno = 0;
		if (fflush(o->f) != 0 || ferror(o->f))
			e = errno ? errno : EIO;
		errno = 0;
		if (fclose(o->f) != 0 && !e)
			e = errno ? errno : EIO;
		if (keep >= 0) {
			if (!e && fsync(keep) != 0 && errno != EINVAL)
				e = errno;
			close(keep);
		}
	} else {
		if (o->tmp && fsync(o->fd) != 0 && errno != EINVAL)
			e = errno;
		if (close(o->fd) != 0 && !e && errno != EINTR)
			e = errno;
	}
	o->f = NULL;
	o->fd = -1;
	if (!e)
		return 0;
	say(err, errlen, "cannot write '%s': %s", o->path, strerror(e));
	errno = e;
	return -1;
}

int outfile_install(const char *tmp, const char *final, int replace)
{
	if (replace)
		return rename(tmp, final);
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	/* no RENAME_NOREPLACE here: a link, which fails on any name taken */
	if (link(tmp, final) == 0) {
		unlink(tmp);
		return 0;
	}
	return -1;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	int e;

	if (!o->path)
		return 0;
	if (outfile_close(o, err, errlen) != 0) {
		e = errno;
		outfile_abort(o);
		errno = e;
		return -1;
	}
	if (o->tmp && outfile_install(o->tmp, o->path, o->force) != 0) {
		e = errno;
		if (e == EEXIST)
			say(err, errlen,
			    "'%s' exists; use --force to overwrite it, or -o to choose another name%s",
			    o->path, "");
		else
			say(err, errlen, "cannot write '%s': %s", o->path, strerror(e));
		outfile_abort(o);
		errno = e;
		return -1;
	}
	outfile_forget(o->slot);
	free(o->tmp);
	free(o->path);
	outfile_clear(o);
	return 0;
}

void outfile_abort(struct outfile *o)
{
	int e = errno;

	if (o->f)
		fclose(o->f);
	else if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	outfile_forget(o->slot);
	free(o->tmp);
	free(o->path);
	outfile_clear(o);
	errno = e;
}

int outfile_input_index(const char *out, const char *const *inputs, int n)
{
	struct stat so, si;

	if (!out || stat(out, &so) != 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (inputs[i] && strcmp(inputs[i], "-") != 0 && stat(inputs[i], &si) == 0 &&
		    si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			return i;
	return -1;
}

int outfile_check_inputs(const char *out, const char *const *inputs, int n, char *err,
			 size_t errlen)
{
	int i = outfile_input_index(out, inputs, n);

	if (i < 0)
		return 0;
	if (err && errlen)
		snprintf(err, errlen,
			 "'%s' is the input '%s'; choose another output (--force never replaces an input)",
			 out, inputs[i]);
	return -1;
}

int outfile_scratch(const char *dir)
{
	int fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* a file system without O_TMPFILE: a private name, gone at once */
	size_t n = strlen(dir) + sizeof("/.gprof-dl-tmp-XXXXXX");
	char *name = malloc(n);
	if (!name)
		return -1;
	snprintf(name, n, "%s/.gprof-dl-tmp-XXXXXX", dir);
	fd = mkostemp(name, O_CLOEXEC);
	if (fd >= 0)
		unlink(name);
	int e = errno;
	free(name);
	errno = e;
	return fd;
}
