-- step_time.sql - per rank and ProfileStep: when it started, how long it
-- lasted, whether the Distributed view counts it, and, for a counted step,
-- the rank's wait in it and its busy time (step - wait), as
-- `gprof-dl summary --view distributed` defines them (gprof-dl-summary(1),
-- "Distributed Summary"):
--   counted: all of a rank's steps but the first skip_steps, never more
--     than half of them (floor(n / 2));
--   wait: each communication call's duration - the shortest duration of the
--     same call over the ranks (matched by process group and coll_seq, else
--     by the ordinal rule; point-to-point by source, destination and
--     ordinal), lying at the call's start; per step, the union of the waits
--     of the calls that started in it, clipped to it (gaps and islands).
-- Times are the job clock (Unix ns); durations ns.
-- Engines: DuckDB and Spark SQL over `gprof-dl export --csv --partitioned`,
-- sqlite over `gprof-dl export --sqlite` (examples/recipes/run); plain SQL
-- with window functions.
-- A rank's calls: its host communication calls (the outermost of each
-- thread), or on a rank with communication GPU work, that work: the work of
-- each host call (its runtime call, by correlation, lies in the call) from
-- its first start to its last end, timed in the step its host call started
-- in.
-- params: skip_steps (default 10, as --skip-steps), in views.sql.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
SELECT rank, step, start_ns, dur_ns, counted, wait_ns, busy_ns
FROM step_busy
ORDER BY rank, step
