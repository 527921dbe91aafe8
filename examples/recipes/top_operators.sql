-- top_operators.sql: the operators of a job by name, as `gprof-dl summary
-- --view operator` over all the job's traces gives them (Calls, CPU Total,
-- Avg, Max, Min, GPU Total, Avg, Max, Min), and their spread over the ranks:
-- each rank's CPU Total of the name as `summary --view operator` of that
-- rank's trace alone gives it, then the least, the median and the largest
-- over the ranks that called it, and the rank of the largest (the lowest
-- such rank on a tie).
--
-- Engines: DuckDB, Spark SQL, sqlite (3.25 or later: window functions), as it
-- is: plain SQL, no engine's own function (CASE for greatest/least, which
-- sqlite lacks; CAST(... AS DOUBLE) for a division, which sqlite would do on
-- integers). Tables of the SQL exports (gprof-dl-export(1)): operators,
-- ranges, runtime, communication, marks, memory (the host events), kernels,
-- memcpy, memset (the GPU work), threads, steps.
--
-- Parameters (the params view of views.sql): top_n, the rows printed,
-- longest CPU Total first (0: all). skip_steps is not used: the Operator
-- view measures every step.
--
-- Rules, as gprof-dl's (gprof-dl-summary(1), "Operator Summary"):
--  - an operator is a range of type Operator on a host thread (OperatorInner
--    is not); nested operators count in their own rows too;
--  - its CPU time is its range clipped to the window: the union of every
--    ProfileStep range of the job (of the rank alone, for the spread), or
--    the whole run where there is no step; a call counts when a positive
--    part of it lies in the window (a zero-length one: when its time does);
--  - its GPU time is the GPU work launched inside it (by a host call within
--    its range on its thread, the call being the host event of the process
--    with the work's correlation id), inner calls' included, counted when
--    the launching call lies in the window, in full;
--  - a call that redispatches to itself (a range whose parent, the innermost
--    host range around it, has the same name and type and no other child
--    range) is folded into its parent and is no call of its own. The recipe
--    finds the parent as the host range just before in start order (ties:
--    longer first) that ends no earlier, and the other children as the
--    ranges after it that end after it but not after the parent.
-- What SQL does not reproduce here:
--  - CPU Ratio and GPU Ratio (unions), and GPU work tied to an operator by
--    its external id where no host range is around its call;
--  - host ranges that overlap partly (one starts inside another and ends
--    after it, such as an nvtxRangeStart/End pair): gprof-dl's walk closes
--    the outer one there, so its GPU time and what folds may differ here;
--  - two host ranges with the same start and length keep the trace's order
--    in gprof-dl; here they are ordered by name and type;
--  - the window is made of the steps table's steps, which leaves out a step
--    of no length or one that never ended (open at exit).
-- Times are integer ns; avg_ns, gpu_avg_ns and rank_median_ns are real.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
-- the calls (views.sql: ops), each clipped to the job's window ...
WITH job_has_steps AS (SELECT count(*) AS n FROM steps),
job_clip AS (
  SELECT o.rank, o.pid, o.thread, o.idx, o.name, o.dur_ns,
         sum(CASE WHEN w.s IS NULL THEN 0
                  ELSE (CASE WHEN o.end_ns < w.e THEN o.end_ns ELSE w.e END)
                     - (CASE WHEN o.start_ns > w.s THEN o.start_ns ELSE w.s END) END) AS clipped,
         count(w.s) AS hits
  FROM ops o LEFT JOIN job_window w ON o.start_ns <= w.e AND o.end_ns >= w.s
  GROUP BY o.rank, o.pid, o.thread, o.idx, o.name, o.dur_ns
),
launched AS (
  SELECT c.rank, c.pid, c.thread, c.start_ns, c.end_ns, w.dur_ns
  FROM (SELECT rank, pid, correlation, dur_ns FROM kernels
        UNION ALL SELECT rank, pid, correlation, dur_ns FROM memcpy
        UNION ALL SELECT rank, pid, correlation, dur_ns FROM memset) w
  JOIN launchers c ON c.rank = w.rank AND c.pid = w.pid AND c.correlation = w.correlation
  WHERE NOT EXISTS (SELECT 1 FROM steps)
     OR EXISTS (SELECT 1 FROM job_window j
                WHERE (c.start_ns < j.e AND c.end_ns > j.s)
                   OR (c.start_ns = c.end_ns AND c.start_ns >= j.s AND c.start_ns <= j.e))
),
-- each operator call's GPU time: the work launched inside it
op_gpu AS (
  SELECT o.rank, o.pid, o.thread, o.idx, sum(l.dur_ns) AS gpu
  FROM ops o
  JOIN launched l ON l.rank = o.rank AND l.pid = o.pid AND l.thread = o.thread
                 AND o.start_ns <= l.start_ns AND l.end_ns <= o.end_ns
  GROUP BY o.rank, o.pid, o.thread, o.idx
),
job_calls AS (
  SELECT c.name, CASE WHEN n.n = 0 THEN c.dur_ns ELSE c.clipped END AS cpu,
         coalesce(g.gpu, 0) AS gpu
  FROM job_clip c CROSS JOIN job_has_steps n
  LEFT JOIN op_gpu g ON g.rank = c.rank AND g.pid = c.pid AND g.thread = c.thread
                    AND g.idx = c.idx
  WHERE n.n = 0 OR c.clipped > 0 OR (c.dur_ns = 0 AND c.hits > 0)
),
job_ops AS (
  SELECT name, count(*) AS calls, sum(cpu) AS total_ns,
         CAST(sum(cpu) AS DOUBLE) / count(*) AS avg_ns, max(cpu) AS max_ns, min(cpu) AS min_ns,
         sum(gpu) AS gpu_total_ns, CAST(sum(gpu) AS DOUBLE) / count(*) AS gpu_avg_ns,
         max(gpu) AS gpu_max_ns, min(gpu) AS gpu_min_ns
  FROM job_calls
  GROUP BY name
),
ranked AS (
  SELECT j.name, j.calls, j.total_ns, j.avg_ns, j.max_ns, j.min_ns,
         j.gpu_total_ns, j.gpu_avg_ns, j.gpu_max_ns, j.gpu_min_ns, s.ranks, s.rank_min_ns, s.rank_median_ns, s.rank_max_ns, s.max_rank,
         row_number() OVER (ORDER BY j.total_ns DESC, j.name) AS pos
  FROM job_ops j
  LEFT JOIN (SELECT * FROM name_spread WHERE kind = 'operator') s ON s.name = j.name
)
SELECT r.name, r.calls, r.total_ns, r.avg_ns, r.max_ns, r.min_ns,
       r.gpu_total_ns, r.gpu_avg_ns, r.gpu_max_ns, r.gpu_min_ns, r.ranks, r.rank_min_ns, r.rank_median_ns, r.rank_max_ns, r.max_rank
FROM ranked r CROSS JOIN params p
WHERE p.top_n = 0 OR r.pos <= p.top_n
ORDER BY r.pos
