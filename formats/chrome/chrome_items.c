/*
 * chrome_items.c - the pieces of traceEvents and otherData every part of the
 * chrome exporter writes with (chrome_internal.h): an item's line, a
 * metadata event, a wall time. Below chrome_writer.c's dispatch, so that
 * chrome_gpu.c and chrome_job.c call down, not back into it.
 */
#include "formats/chrome/chrome_internal.h"

#include <stdio.h>
#include <time.h>

void chrome_next_item(struct chrome_writer *c)
{
	if (c->items++)
		json_raw(&c->json, ",\n", 2);
	else
		json_raw(&c->json, "\n", 1);
}

void chrome_meta_begin(struct chrome_writer *c, const char *name, uint64_t pid, uint64_t tid)
{
	struct json_writer *j = &c->json;
	chrome_next_item(c);
	json_begin_object(j);
	chrome_key_string(j, "name", name);
	chrome_key_string(j, "ph", "M");
	chrome_key(j, "ts");
	json_uint(j, 0);
	chrome_key_uint(j, "pid", pid);
	chrome_key_uint(j, "tid", tid);
	chrome_key(j, "args");
	json_begin_object(j);
}

void chrome_meta_end(struct chrome_writer *c)
{
	json_end_object(&c->json);
	json_end_object(&c->json);
}

void chrome_key_wall_time(struct json_writer *j, const char *key, int64_t wall_ns)
{
	char buf[64];
	time_t s = (time_t)(wall_ns >= 0 ? wall_ns / 1000000000 : (wall_ns - 999999999) / 1000000000);
	long ns = (long)(wall_ns - (int64_t)s * 1000000000);
	struct tm tm;
	if (!gmtime_r(&s, &tm))
		return;
	size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%09ldZ", ns);
	chrome_key_string(j, key, buf);
}
