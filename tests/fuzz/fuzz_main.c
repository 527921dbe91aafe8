/*
 * fuzz_main.c - the driver of a fuzz target where there is no libFuzzer (a
 * gcc build, or clang without -DGPDL_FUZZ=ON): each file named, and each
 * regular file of each directory named, goes once through
 * LLVMFuzzerTestOneInput, in name order. So the targets and their seed
 * corpora run in every build, under the sanitizers in a sanitizer build.
 *
 *   fuzz_trace tests/fuzz/corpus/trace [FILE...]
 *
 * Prints how many inputs ran; exits 1 when a file or directory cannot be
 * read or when there was no input at all (a corpus gone missing is a
 * failure, not a pass). A failed check in the target aborts.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			uint8_t *bigger = realloc(buf, cap *= 2);
			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	int bad = !buf || ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "fuzz: cannot read '%s'\n", path);
		free(buf);
		return -1;
	}
	/* an exact-size copy, so that ASan sees a read past the input's end */
	uint8_t *exact = malloc(n ? n : 1);
	if (!exact)
		abort();
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The number of inputs run from path (a file or a directory), or -1. */
static long run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path) == 0 ? 1 : -1;
	struct dirent **names;
	int n = scandir(path, &names, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "fuzz: cannot read '%s': %s\n", path, strerror(errno));
		return -1;
	}
	long ran = 0;
	for (int i = 0; i < n; i++) {
		char file[4096];
		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
			if (ran >= 0 && run_file(file) == 0)
				ran++;
			else
				ran = -1;
		}
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	long total = 0;
	for (int i = 1; i < argc; i++) {
		long ran = run_path(argv[i]);
		if (ran < 0)
			return 1;
		total += ran;
	}
	printf("%s: %ld inputs ran\n", argv[0], total);
	if (total == 0) {
		fprintf(stderr, "fuzz: no input given\n");
		return 1;
	}
	return 0;
}
