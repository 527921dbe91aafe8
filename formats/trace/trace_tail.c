/*
 * trace_tail.c - a trace's end from its END chunk (trace_tail.h).
 */
#include "formats/trace/trace_tail.h"

#include "formats/trace/trace_format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int trace_tail_end(const char *path, uint64_t *end_ns)
{
	unsigned char b[TRACE_CHUNK_HEADER_SIZE + TRACE_END_SIZE];
	struct stat st;
	/* a pipe or a FIFO has no end to read early, and opening one would take
	 * its writer away from the reader that follows: a regular file only */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		 st.st_size >= (off_t)(TRACE_FILE_HEADER_SIZE + sizeof(b)) &&
		 pread(fd, b, sizeof(b), st.st_size - (off_t)sizeof(b)) == (ssize_t)sizeof(b);
	close(fd);
	if (!ok || trace_le32(b + TRACE_CH_TYPE) != TRACE_CHUNK_END ||
	    trace_le32(b + TRACE_CH_LENGTH) != TRACE_END_SIZE)
		return -1;
	uLong crc = crc32(crc32(0L, b, TRACE_CH_CRC), b + TRACE_CHUNK_HEADER_SIZE, TRACE_END_SIZE);
	if ((uint32_t)crc != trace_le32(b + TRACE_CH_CRC))
		return -1;
	*end_ns = trace_le64(b + TRACE_CHUNK_HEADER_SIZE);
	return 0;
}
