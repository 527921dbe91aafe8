-- step_time.sql - per rank and ProfileStep: when it started, how long it
-- lasted, whether the Distributed view counts it, and, for a counted step,
-- the rank's wait in it, its busy time (step - wait) and busy's parts, as
-- `gprof-dl summary --view distributed` defines them (gprof-dl-summary(1),
-- "Distributed Summary", "The parts of a step"):
--   counted: all of a rank's steps but the first skip_steps, never more
--     than half of them (floor(n / 2));
--   wait: each communication call's duration - the shortest duration of the
--     same call over the ranks (matched by process group and coll_seq, else
--     by the ordinal rule; point-to-point by source, destination and
--     ordinal), lying at the call's start, clipped to the end of the step
--     the call started in; the step's wait is the measure of their union
--     inside it;
--   the parts, disjoint, adding up to busy: each piece of the step goes to
--     the first of wait, data loading (Dataloader ranges), computation (host
--     operators that are no communication, or on a rank with GPU work its
--     kernels that are no communication), communication (the host's
--     communication ranges, or on a rank with communication GPU work that
--     work) that holds it; outside = what none holds (host time outside
--     operators); contention = the step thread's run-queue time in it
--     (steps.runq_ns, known where steps.cpu_ns > 0; empty elsewhere), at most
--     busy, taken out of the other parts in proportion to their size (on a
--     rank with GPU work, of data loading and outside first); runq: all of
--     that run-queue time, in the step's wait too (empty: not measured).
--   A sweep per rank over the boundaries of those sets (+1 at each start,
--   -1 at each end; running counts by a window SUM) gives them; see
--   views.sql.
-- Times are the job clock (Unix ns); durations ns; the parts of a step
-- need not be whole ns once contention is taken out.
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
SELECT rank, step, start_ns, dur_ns, counted, wait_ns, busy_ns,
       comp_part AS computation_ns, data_part AS data_loading_ns,
       host_part AS outside_ns, comm_part AS communication_ns,
       CASE WHEN sched_known = 1 THEN contention_part END AS contention_ns,
       CASE WHEN sched_known = 1 THEN runq_all END AS runq_ns
FROM step_parts
ORDER BY rank, step
