/*
 * outfile.h - the one way gprof-dl writes an output file (every command's
 * -o, the recorder's trace, each file of a CSV directory).
 *
 * An output is written to a temporary file beside it, named
 * ".NAME.gpdl-tmp.XXXXXX" (NAME cut to 200 bytes, XXXXXX random), created
 * with O_CREAT|O_EXCL|O_NOFOLLOW, so no file planted under a predictable
 * name, and no symbolic link, is ever written through. When the output is
 * whole it is fsync()ed and renamed to its name:
 *
 *  - without force, with renameat2(RENAME_NOREPLACE) (or link() where the
 *    file system lacks it): a file, or a symbolic link, that is there or
 *    that appeared meanwhile is never replaced;
 *  - with force, with rename(): an existing file is replaced only then, in
 *    one step, and a symbolic link at the name is replaced itself, never
 *    the file it points to.
 *
 * So the final name only ever holds a complete file, the old one or the new
 * one. Whatever fails (a write, the fsync, the rename) removes the
 * temporary file, and so do SIGINT, SIGTERM and SIGHUP when their
 * disposition was the default: a signal-safe list of the temporary files
 * is unlinked, then the signal is raised again so that the exit status is
 * the signal's. SIGKILL cannot be caught: it leaves the temporary file (the
 * final name untouched), which the man pages name.
 *
 * An existing output that is neither a regular file, a symbolic link nor a
 * directory (a pipe, a terminal, /dev/null, -o /dev/stdout) is written in
 * place: nothing can be lost there. Messages are one line: "cannot write
 * 'NAME': <strerror>".
 */
#ifndef GPDL_COMMON_OUTFILE_H
#define GPDL_COMMON_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define OUTFILE_FORCE 1u /* an existing file at the name is replaced when the new one is whole */

struct outfile {
	char *path; /* the final name (a copy) */
	char *tmp;  /* the temporary file; NULL when written in place (a device, a pipe) */
	int fd;     /* -1 once closed */
	FILE *f;    /* a stream on fd, which then owns it (outfile_fdopen, or the caller's) */
	int force;
	int slot; /* in the signal cleanup list; -1: none */
};

/* Opens path's temporary file (mode before the umask: 0666 or 0644). 0, or
 * -1 with errno set and a one-line message in err: "'P' exists; use --force
 * to overwrite it, or -o to choose another name" (errno EEXIST), "'P' is a
 * directory", "cannot create 'P': <reason>". o is empty (outfile_abort does
 * nothing) after a failure. */
int outfile_open(struct outfile *o, const char *path, unsigned flags, mode_t mode, char *err,
		 size_t errlen);

/* A stdio stream on o->fd, owned by o from then on; NULL with errno. */
FILE *outfile_fdopen(struct outfile *o);

/* Flushes, fsyncs and closes the file (the temporary one stays, for
 * outfile_commit): 0, or -1 with errno and the message "cannot write 'P':
 * <reason>" (P the final name) when a write, the flush or the fsync failed. */
int outfile_close(struct outfile *o, char *err, size_t errlen);

/* outfile_close if still open, then the temporary file renamed to the
 * final name as the header says: 0, or -1 with errno and a one-line message
 * (errno EEXIST when a file took the name meanwhile, without force); the
 * temporary file is removed after a failure. Frees o either way. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);

/* Closes and removes the temporary file, frees o; the final name is left as
 * it was. Safe on an empty or committed o. */
void outfile_abort(struct outfile *o);

/* The temporary file's name for final, in final's directory (malloc'ed). */
char *outfile_tmp_name(const char *final);

/* tmp renamed to final: replacing what is there when replace, else never
 * (RENAME_NOREPLACE, or link() and unlink()). 0, or -1 with errno (EEXIST:
 * the name is taken). Nothing is removed on failure. */
int outfile_install(const char *tmp, const char *final, int replace);

/* Adds path (copied) to the files removed when SIGINT, SIGTERM or SIGHUP
 * ends the process; the slot, or -1 when the list is full. Removed again
 * with outfile_forget(slot). */
int outfile_remember(const char *path);
void outfile_forget(int slot);

/* Whether out names the same file (st_dev and st_ino, through symbolic and
 * hard links) as one of the n inputs ("-" and inputs that cannot be
 * stat()ed are none): its index, or -1. */
int outfile_input_index(const char *out, const char *const *inputs, int n);

/* 0, or -1 with err "'OUT' is the input 'IN'; choose another output
 * (--force never replaces an input)" when out is one of the inputs. */
int outfile_check_inputs(const char *out, const char *const *inputs, int n, char *err,
			 size_t errlen);

/* An unlinked temporary file in dir (O_TMPFILE, or a mkstemp name removed at
 * once where the file system has no O_TMPFILE), opened read-write: the fd,
 * or -1 with errno. */
int outfile_scratch(const char *dir);

#endif
