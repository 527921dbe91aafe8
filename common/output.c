/*
 * output.c - a subcommand's output file (output.h).
 */
#include "common/output.h"
#include "common/error.h"

#include <errno.h>
#include <string.h>

int output_open(struct outfile *o, const char *path, int force, const char *const *inputs,
		    int n)
{
	char err[2048];
	if (outfile_check_inputs(path, inputs, n, err, sizeof(err)) != 0 ||
	    outfile_open(o, path, force ? OUTFILE_FORCE : 0, 0666, err, sizeof(err)) != 0)
		return error("%s", err);
	return 0;
}

int output_commit(struct outfile *o)
{
	char err[2048];
	if (outfile_commit(o, err, sizeof(err)) != 0)
		return error("%s", err);
	return 0;
}

int output_fail(struct outfile *o, int e)
{
	char err[2048];
	/* the close usually says why again (the flush fails the same way) */
	if (outfile_close(o, err, sizeof(err)) == 0 || (e && errno == EIO))
		snprintf(err, sizeof(err), "cannot write '%s': %s", o->path ? o->path : "?",
			 strerror(e ? e : EIO));
	outfile_abort(o);
	return error("%s", err);
}
